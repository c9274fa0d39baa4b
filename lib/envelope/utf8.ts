import { Buffer, isUtf8 } from 'node:buffer';

/**
 * Offset of the first byte of the first ill-formed UTF-8 sequence, or -1 when the bytes are
 * well-formed (Unicode Table 3-7: no overlongs, no UTF-8-encoded surrogates, nothing past
 * U+10FFFF, no truncated sequences). Only used to name the offset: isUtf8 is the fast check.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i += 1;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0; // overlong
      if (b === 0xed) hi = 0x9f; // surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90; // overlong
      if (b === 0xf4) hi = 0x8f; // > U+10FFFF
    } else return i; // continuation byte as lead, C0/C1 overlong lead, F5..FF
    if (i + need >= n) return i; // truncated at the end
    const second = bytes[i + 1]!;
    if (second < lo || second > hi) return i;
    for (let k = 2; k <= need; k++) {
      const c = bytes[i + k]!;
      if (c < 0x80 || c > 0xbf) return i;
    }
    i += need + 1;
  }
  return -1;
}

const BOM = 0xfeff;

export type TextResult = { ok: true; text: string } | { ok: false; error: string };

/**
 * Strict UTF-8 → string. A leading BOM is refused rather than skipped: no SDK emits one, and
 * JSON.parse / Python's json.loads refuse it too, so every core reaches the same verdict.
 */
export function decodeUtf8(input: Uint8Array): TextResult {
  const buf = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  if (!isUtf8(buf)) {
    return { ok: false, error: `payload is not valid UTF-8 (byte ${firstInvalidUtf8(buf)})` };
  }
  const text = buf.toString('utf8');
  if (text.charCodeAt(0) === BOM) return { ok: false, error: BOM_ERROR };
  return { ok: true, text };
}

export const BOM_ERROR = 'payload starts with a byte order mark (U+FEFF); a BabelQueue body is JSON without a BOM';

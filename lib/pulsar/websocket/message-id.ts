import type { PulsarMessageId } from '../client-types.js';

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** True when `id` is a non-empty, well-formed standard base64 string (what the broker sends and accepts). */
export function isWireMessageId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && id.length % 4 === 0 && BASE64.test(id);
}

interface DecodedId {
  ledgerId: number;
  entryId: number;
  partition: number;
  batchIndex: number;
}

/**
 * A message id as the WebSocket API carries it: base64 of the protobuf `MessageIdData`, which is the same
 * byte format the native client's `MessageId.serialize()` produces. `toString()` returns the base64 form.
 */
export class PulsarWebSocketMessageId implements PulsarMessageId {
  private decoded?: DecodedId;

  constructor(private readonly base64: string) {}

  static deserialize(data: Buffer): PulsarWebSocketMessageId {
    return new PulsarWebSocketMessageId(data.toString('base64'));
  }

  toString(): string {
    return this.base64;
  }

  serialize(): Buffer {
    return Buffer.from(this.base64, 'base64');
  }

  equals(other: PulsarMessageId): boolean {
    return other.toString() === this.base64;
  }

  get ledgerId(): number {
    return this.decode().ledgerId;
  }

  get entryId(): number {
    return this.decode().entryId;
  }

  /** Partition index, -1 for a non-partitioned topic. */
  get partition(): number {
    return this.decode().partition;
  }

  /** Index inside a batch, -1 when the message was not batched. */
  get batchIndex(): number {
    return this.decode().batchIndex;
  }

  /** Debug form, like the native client's: `(ledger,entry,partition,batchIndex)`. */
  describe(): string {
    const d = this.decode();
    return `(${d.ledgerId},${d.entryId},${d.partition},${d.batchIndex})`;
  }

  private decode(): DecodedId {
    this.decoded ??= decodeMessageIdData(this.serialize());
    return this.decoded;
  }
}

/** Minimal protobuf reader for MessageIdData fields 1-4; other fields are skipped. Never throws. */
function decodeMessageIdData(buf: Buffer): DecodedId {
  const out: DecodedId = { ledgerId: -1, entryId: -1, partition: -1, batchIndex: -1 };
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    while (pos < buf.length) {
      const byte = buf[pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
    throw new RangeError('truncated varint');
  };
  try {
    while (pos < buf.length) {
      const key = Number(varint());
      const field = key >>> 3;
      const wire = key & 7;
      if (wire === 0) {
        const v = varint();
        if (field === 1) out.ledgerId = Number(BigInt.asUintN(64, v));
        else if (field === 2) out.entryId = Number(BigInt.asUintN(64, v));
        else if (field === 3) out.partition = Number(BigInt.asIntN(32, v));
        else if (field === 4) out.batchIndex = Number(BigInt.asIntN(32, v));
      } else if (wire === 2) {
        pos += Number(varint());
      } else if (wire === 1) {
        pos += 8;
      } else if (wire === 5) {
        pos += 4;
      } else {
        break;
      }
    }
  } catch {
    // Malformed id: keep whatever was decoded.
  }
  return out;
}

import { BabelNonRetriableError, BabelQueueError } from '../envelope/index.js';
import { parseJson } from '../envelope/json.js';
import { stringifyJson } from '../envelope/json-serializer.js';
import { moveRawSlot, rawNumberAt } from '../envelope/raw-numbers.js';
import type { PayloadSchema } from './payload-schema.js';
import { MalformedCiphertextError } from './malformed-ciphertext.js';
import { errorText } from '../envelope/error-text.js';

/** Field-level encryption: a KMS, Vault transit, or the reference AesGcmCipher. */
export interface FieldCipher {
  /** The JSON text of one field value (UTF-8 bytes) → a string to put in its place. */
  encrypt(plaintext: Buffer): string;
  /** The exact inverse of encrypt; throws on a wrong key or a tampered value. */
  decrypt(ciphertext: string): Buffer;
}

/** A field marked `x-gdpr-sensitive` could not be restored (wrong key, tampered, not a ciphertext). */
export class DecryptError extends BabelQueueError {
  /** The marked path that failed, e.g. `customer.email` or `addresses[].line`. */
  readonly path: string;

  constructor(path: string, message: string, options?: { cause?: unknown }) {
    super(`cannot decrypt the protected field ${path}: ${message}`, options);
    this.name = 'DecryptError';
    this.path = path;
  }
}

/**
 * A field marked `x-gdpr-sensitive` that arrived as something no cipher wrote (not a string, or a string the
 * cipher says is no ciphertext): refused without a retry, since the same bytes come back the same. Its value
 * never reaches the handler.
 */
export class UnprotectedFieldError extends BabelNonRetriableError {
  /** The marked path, e.g. `customer.email`. */
  readonly path: string;

  constructor(path: string, message: string, options?: { cause?: unknown }) {
    super(`the protected field ${path} is not a ciphertext: ${message}`, options);
    this.name = 'UnprotectedFieldError';
    this.path = path;
  }
}

/** What a value is, without quoting it (it may be a secret sent in the clear by mistake). */
const kindOf = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `true` or a non-empty category string marks a schema node; anything else does not. */
const isMarked = (node: Json): boolean => {
  const mark = node['x-gdpr-sensitive'];
  return mark === true || (typeof mark === 'string' && mark !== '');
};

/**
 * Every path the schema marks `x-gdpr-sensitive`, sorted: dotted for nested objects, `field[]` for array items,
 * `""` for a mark on the root (which marks nothing addressable in `data`).
 */
export function sensitivePaths(schema: PayloadSchema | undefined): string[] {
  const out: string[] = [];
  const collect = (node: unknown, path: string): void => {
    if (!isObject(node)) return;
    if (isMarked(node)) out.push(path);
    const properties = node.properties;
    if (isObject(properties)) {
      for (const [name, sub] of Object.entries(properties)) collect(sub, path === '' ? name : `${path}.${name}`);
    }
    if (isObject(node.items)) collect(node.items, `${path}[]`);
  };
  collect(schema, '');
  return out.sort();
}

type Segment = { key: string; array: boolean };
const segmentsOf = (path: string): Segment[] =>
  path === ''
    ? []
    : path
        .split('.')
        .map((part) =>
          part.length >= 2 && part.endsWith('[]')
            ? { key: part.slice(0, -2), array: true }
            : { key: part, array: false },
        );

type Leaf = (value: unknown, container: object, key: string | number) => { value: unknown } | null;

/** Applies `leaf` to every value at `segments` in `node`; an absent field or another shape is skipped. */
function visit(node: unknown, segments: Segment[], leaf: Leaf): void {
  const [first, ...rest] = segments;
  if (!first || !isObject(node) || !Object.prototype.hasOwnProperty.call(node, first.key)) return;
  const child = node[first.key];
  if (first.array) {
    if (!Array.isArray(child)) return;
    child.forEach((element, index) => {
      if (rest.length > 0) return visit(element, rest, leaf);
      const replaced = leaf(element, child, index);
      if (replaced) child[index] = replaced.value;
    });
    return;
  }
  if (rest.length > 0) return visit(child, rest, leaf);
  const replaced = leaf(child, node, first.key);
  if (replaced) {
    Object.defineProperty(node, first.key, {
      value: replaced.value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
}

/** The exact JSON text of one value in its container (a number keeps the text it arrived with). */
const leafJson = (value: unknown, container: object, key: string | number): string =>
  (typeof value === 'number' ? rawNumberAt(container, key) : undefined) ?? stringifyJson(value) ?? 'null';

/** A deep copy that keeps exact numbers (the copy is what protect / unprotect change). */
function copyOf<T>(data: T): T {
  const parsed = parseJson(stringifyJson(data) ?? '{}');
  if (!parsed.ok) throw new BabelQueueError(`data cannot be copied as JSON: ${parsed.error}`);
  return parsed.value as T;
}

/**
 * A copy of `data` with every marked value replaced by `cipher.encrypt(utf8(JSON of the value))`, a string;
 * a whole object or array marked is encrypted as one. `data` itself is not changed. No marks: `data` as is.
 */
export function protect<T extends object>(data: T, schema: PayloadSchema | undefined, cipher: FieldCipher): T {
  const paths = sensitivePaths(schema).filter((path) => path !== '');
  if (paths.length === 0) return data;
  const copy = copyOf(data);
  for (const path of paths) {
    visit(copy, segmentsOf(path), (value, container, key) => ({
      value: cipher.encrypt(Buffer.from(leafJson(value, container, key), 'utf8')),
    }));
  }
  return copy;
}

/**
 * A copy of `data` with every marked string decrypted back to its value (numbers exact). A marked value that is
 * present must be a ciphertext: anything else (a number, null, an object, a string the cipher refuses as
 * malformed) throws UnprotectedFieldError, not retriable; one that does not decrypt (a wrong key, tampered)
 * throws DecryptError. No error quotes the value or the decrypted text.
 */
export function unprotect<T extends object>(data: T, schema: PayloadSchema | undefined, cipher: FieldCipher): T {
  const paths = sensitivePaths(schema).filter((path) => path !== '');
  if (paths.length === 0) return data;
  const copy = copyOf(data);
  for (const path of paths) {
    visit(copy, segmentsOf(path), (value, container, key) => {
      if (typeof value !== 'string') throw new UnprotectedFieldError(path, `it arrived as ${kindOf(value)}`);
      let plaintext: Buffer;
      try {
        plaintext = cipher.decrypt(value);
      } catch (error) {
        if (error instanceof MalformedCiphertextError) throw new UnprotectedFieldError(path, error.message);
        throw new DecryptError(path, errorText(error), { cause: error });
      }
      // Parsed inside a holder so that a number's exact text is recorded, then moved to the field's slot.
      const parsed = parseJson(`[${plaintext.toString('utf8')}]`);
      const holder = parsed.ok ? (parsed.value as unknown[]) : [];
      // The parser's message would quote the decrypted text: only the fact is reported.
      if (!parsed.ok || holder.length !== 1) throw new DecryptError(path, 'the decrypted value is not one JSON value');
      moveRawSlot(holder, 0, container, key);
      return { value: holder[0] };
    });
  }
  return copy;
}

/** True when the schema marks at least one field of `data` sensitive. */
export const hasSensitiveFields = (schema: PayloadSchema | undefined): boolean =>
  sensitivePaths(schema).some((path) => path !== '');

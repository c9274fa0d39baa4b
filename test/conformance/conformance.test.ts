/**
 * The cross-SDK conformance suite, run from the vendored manifest: one `it` per manifest case,
 * so cases added upstream run without code changes. A fixture the manifest names that is
 * missing, an unknown block, or an expectation key this runner does not know fails loudly.
 *
 * Not applicable here (listed so it is visible):
 *   - other brokers: sqs, asb, kafka, artemis, redis, rabbitmq.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EnvelopeCodec } from '../../lib/envelope/index.js';
import { pulsarProperties, reconcileAttempts, schemaVersionGate } from '../../lib/pulsar/binding.js';
import { InMemoryIdempotencyStore } from '../../lib/idempotency/in-memory.store.js';
import { runOnce } from '../../lib/idempotency/run-once.js';
import { payloadViolations } from '../../lib/schema/payload-schema.js';

const here = dirname(fileURLToPath(import.meta.url));
const vendor = join(here, 'vendor');
const upstream = join(here, '..', '..', '..', 'shared', 'conformance');

type Json = any; // manifest entries are checked field by field below

const manifest: Json = JSON.parse(readFileSync(join(vendor, 'manifest.json'), 'utf8'));

const APPLICABLE = [
  'cases',
  'pulsar',
  'roundtrip',
  'data_shape',
  'forbidden_keys',
  'idempotency',
  'payload_schema',
  'payload_schema_unicode',
];
const NOT_APPLICABLE = ['sqs', 'asb', 'kafka', 'artemis', 'redis', 'rabbitmq'];
const METADATA = ['schema_version', 'description'];
const PULSAR_BLOCKS = ['property_projection', 'attempts_reconciliation', 'schema_version_gate'];

/** Bytes of a fixture the manifest names; a missing one fails the case loudly. */
function fixture(file: string): Buffer {
  const path = join(vendor, file);
  if (!existsSync(path)) throw new Error(`conformance fixture named by manifest.json is missing: ${file}`);
  return readFileSync(path);
}

/** Every case must be a non-empty list: an emptied block would otherwise pass silently. */
function list<T>(value: T[] | undefined, where: string): T[] {
  if (!Array.isArray(value) || value.length === 0) throw new Error(`manifest block ${where} has no cases`);
  return value;
}

/** RFC 6901 lookup; `found: false` when a segment is missing. */
function pointer(doc: unknown, ptr: string): { found: boolean; value?: unknown } {
  if (ptr === '') return { found: true, value: doc };
  let node: unknown = doc;
  for (const segment of ptr
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))) {
    if (typeof node !== 'object' || node === null || !Object.prototype.hasOwnProperty.call(node, segment)) {
      return { found: false };
    }
    node = (node as Record<string, unknown>)[segment];
  }
  return { found: true, value: node };
}

/** Raw text of a root member of a JSON object text (no parser of ours involved). */
function rawMember(text: string, key: string): string | undefined {
  let i = 1;
  const skipString = (at: number): number => {
    let k = at + 1;
    while (text[k] !== '"') k += text[k] === '\\' ? 2 : 1;
    return k + 1;
  };
  const skipValue = (at: number): number => {
    if (text[at] === '"') return skipString(at);
    if (text[at] === '{' || text[at] === '[') {
      let depth = 0;
      let k = at;
      do {
        if (text[k] === '"') {
          k = skipString(k);
          continue;
        }
        if (text[k] === '{' || text[k] === '[') depth++;
        if (text[k] === '}' || text[k] === ']') depth--;
        k++;
      } while (depth > 0);
      return k;
    }
    let k = at;
    while (k < text.length && !',}] \n\r\t'.includes(text[k]!)) k++;
    return k;
  };
  const ws = (at: number): number => {
    while (' \n\r\t'.includes(text[at]!)) at++;
    return at;
  };
  while (i < text.length) {
    i = ws(i);
    if (text[i] === '}') return undefined;
    const keyEnd = skipString(i);
    const name = JSON.parse(text.slice(i, keyEnd)) as string;
    const valueStart = ws(ws(keyEnd) + 1);
    const valueEnd = skipValue(valueStart);
    if (name === key) return text.slice(valueStart, valueEnd);
    i = ws(valueEnd) + 1; // past ','
  }
  return undefined;
}

/** Removes whitespace outside strings. */
function withoutInsignificantWhitespace(json: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += json[++i];
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (!' \n\r\t'.includes(c)) out += c;
  }
  return out;
}

function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(root, path));
    }
  };
  walk(root);
  return out;
}

describe('conformance suite', () => {
  it('is vendored unchanged (byte-identical to ../shared/conformance when present)', () => {
    expect(existsSync(join(vendor, 'manifest.json'))).toBe(true);
    if (!existsSync(upstream)) return; // outside the workplace only the vendored copy exists
    const files = listFiles(upstream);
    expect(listFiles(vendor)).toEqual(files);
    for (const file of files) {
      expect({ file, same: readFileSync(join(vendor, file)).equals(readFileSync(join(upstream, file))) }).toEqual({
        file,
        same: true,
      });
    }
  });

  it('fails loudly when a fixture the manifest names is missing', () => {
    expect(() => fixture('fixtures/no-such-fixture.json')).toThrow(/missing: fixtures\/no-such-fixture\.json/);
  });

  it('has no block this runner has not classified', () => {
    const known = new Set([...APPLICABLE, ...NOT_APPLICABLE, ...METADATA]);
    expect(Object.keys(manifest).filter((k) => !known.has(k))).toEqual([]);
    for (const block of APPLICABLE) expect(manifest[block]).toBeDefined();
    expect(Object.keys(manifest.pulsar).filter((k) => k !== 'description' && !PULSAR_BLOCKS.includes(k))).toEqual([]);
  });
});

describe('cases', () => {
  const KNOWN_EXPECT = new Set(['urn', 'data', 'attempts', 'lang', 'schema_version', 'dead_letter']);

  it.each(list<Json>(manifest.cases, 'cases').map((c) => [c.name, c]))('%s', (_name, c: Json) => {
    const decoded = EnvelopeCodec.decode(fixture(c.file));
    const env = decoded.envelope;
    if (!c.valid) {
      expect(EnvelopeCodec.accepts(env)).toBe(false);
      expect(EnvelopeCodec.rejection(env)).toEqual(expect.any(String));
      return;
    }
    expect(decoded.error).toBeNull();
    expect(EnvelopeCodec.rejection(env)).toBeNull();
    expect(EnvelopeCodec.accepts(env)).toBe(true);
    const expected = c.expect as Record<string, unknown>;
    expect(Object.keys(expected).filter((k) => !KNOWN_EXPECT.has(k))).toEqual([]);
    const meta = env.meta as Record<string, unknown>;
    if ('urn' in expected) expect(EnvelopeCodec.urn(env)).toBe(expected.urn);
    if ('data' in expected) expect(env.data).toStrictEqual(expected.data);
    if ('attempts' in expected) expect(env.attempts).toBe(expected.attempts);
    if ('lang' in expected) expect(meta.lang).toBe(expected.lang);
    if ('schema_version' in expected) expect(meta.schema_version).toBe(expected.schema_version);
    if ('dead_letter' in expected) expect(env.dead_letter).toMatchObject(expected.dead_letter as object);
    // Per-message fields: presence and shape, never value.
    expect(typeof env.trace_id).toBe('string');
    expect(typeof meta.id).toBe('string');
    expect(Number.isInteger(meta.created_at)).toBe(true);
  });
});

describe('pulsar.property_projection', () => {
  it('projects exactly the golden properties', () => {
    const block = manifest.pulsar.property_projection;
    const decoded = EnvelopeCodec.decode(fixture(block.envelope_file));
    expect(decoded.error).toBeNull();
    expect(pulsarProperties(decoded.envelope)).toStrictEqual(block.properties);
  });
});

describe('pulsar.attempts_reconciliation', () => {
  it.each(
    list<Json>(manifest.pulsar.attempts_reconciliation.cases, 'pulsar.attempts_reconciliation').map((c) => [c.name, c]),
  )('%s', (_name, c: Json) => {
    expect(reconcileAttempts({ bodyAttempts: c.body_attempts, redeliveryCount: c.redelivery_count })).toBe(
      c.expected_attempts,
    );
  });
});

describe('pulsar.schema_version_gate', () => {
  const block = manifest.pulsar.schema_version_gate;
  // Test names spell every non-ASCII character as \uXXXX, so U+00A0 and U+FEFF cases are told apart.
  const visible = (s: string): string =>
    JSON.stringify(s).replace(/[^\x20-\x7e]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const cases = list<Json>(block.cases, 'pulsar.schema_version_gate').map((c) => [
    c.absent ? 'absent' : visible(c.value),
    c,
  ]);

  it.each(cases)('%s', (_name, c: Json) => {
    expect(block.property).toBe('bq-schema-version');
    if (!['decode', 'reject'].includes(c.expect)) throw new Error(`unknown gate verdict ${JSON.stringify(c.expect)}`);
    const body = fixture(block.fixture);
    const verdict = schemaVersionGate(c.absent ? undefined : (c.value as string));
    expect(verdict).toBe(c.expect);
    if (verdict === 'decode') expect(EnvelopeCodec.accepts(EnvelopeCodec.decode(body).envelope)).toBe(true);
  });
});

describe('roundtrip', () => {
  it.each(list<Json>(manifest.roundtrip.cases, 'roundtrip').map((c) => [c.name, c]))('%s', (_name, c: Json) => {
    const decoded = EnvelopeCodec.decode(fixture(c.file));
    expect(decoded.error).toBeNull();
    const env = decoded.envelope;
    if (!EnvelopeCodec.accepts(env)) throw new Error(`roundtrip fixture not accepted: ${EnvelopeCodec.rejection(env)}`);
    const reencoded: unknown = JSON.parse(EnvelopeCodec.encode(EnvelopeCodec.withAttempts(env, env.attempts + 1)));
    expect(pointer(reencoded, '/attempts').value).toBe(c.expect_attempts);
    for (const [ptr, value] of Object.entries(c.expect_preserved as Record<string, unknown>)) {
      expect({ ptr, ...pointer(reencoded, ptr) }).toStrictEqual({ ptr, found: true, value });
    }
  });
});

describe('data_shape', () => {
  it.each(list<Json>(manifest.data_shape.cases, 'data_shape').map((c) => [c.name, c]))('%s', (_name, c: Json) => {
    if (c.mode === 'encode') {
      const text = EnvelopeCodec.encode(EnvelopeCodec.make(c.urn, c.data, { queue: c.queue }));
      const raw = rawMember(text, 'data');
      expect(raw).toBeDefined();
      expect(withoutInsignificantWhitespace(raw!)).toBe(c.expect_encoded_data_json);
    } else if (c.mode === 'decode') {
      expect(EnvelopeCodec.accepts(EnvelopeCodec.decode(fixture(c.file)).envelope)).toBe(c.valid);
    } else {
      throw new Error(`unknown data_shape mode ${JSON.stringify(c.mode)}`);
    }
  });
});

describe('forbidden_keys', () => {
  it.each(list<Json>(manifest.forbidden_keys.cases, 'forbidden_keys').map((c) => [c.name, c]))(
    '%s',
    (_name, c: Json) => {
      if (c.expect !== 'warn') throw new Error(`unknown forbidden_keys expectation ${JSON.stringify(c.expect)}`);
      const hooked: string[] = [];
      const decoded = EnvelopeCodec.decode(fixture(c.file), { onWarning: (m) => hooked.push(m) });
      expect(decoded.error).toBeNull();
      expect(EnvelopeCodec.accepts(decoded.envelope)).toBe(true);
      const naming = (m: string): boolean => m.includes(`'${c.forbidden_key}'`);
      expect(decoded.warnings.some(naming)).toBe(true);
      expect(hooked.some(naming)).toBe(true);
      const reencoded: unknown = JSON.parse(EnvelopeCodec.encode(decoded.envelope));
      for (const ptr of list<string>(c.expect_absent_after_reencode, `${c.name}.expect_absent_after_reencode`)) {
        expect({ ptr, found: pointer(reencoded, ptr).found }).toEqual({ ptr, found: false });
      }
    },
  );
});

describe('idempotency', () => {
  const block = manifest.idempotency;

  it('keys on meta.id of the named envelope', () => {
    expect(block.dedup_key.key_field).toBe('meta.id');
    const decoded = EnvelopeCodec.decode(fixture(block.dedup_key.envelope_file));
    expect((decoded.envelope as Json).meta.id).toBe(block.dedup_key.expected_key);
  });

  it.each(list<Json>(block.sequences.cases, 'idempotency.sequences').map((c) => [c.name, c]))(
    '%s',
    async (_name, c: Json) => {
      const store = new InMemoryIdempotencyStore();
      let invocations = 0;
      for (const delivery of list<Json>(c.deliveries, `${c.name}.deliveries`)) {
        if (!['run', 'skip'].includes(delivery.expect_effect)) {
          throw new Error(`unknown idempotency effect ${JSON.stringify(delivery.expect_effect)}`);
        }
        if (delivery.forget_before) await store.forget(delivery.meta_id);
        let ran = false;
        const handler = async () => {
          ran = true;
          invocations += 1;
          if (delivery.outcome === 'throw') throw new Error('handler failed');
        };
        const outcome = await runOnce(store, delivery.meta_id, handler).catch(() => 'threw');
        expect({ effect: ran ? 'run' : 'skip', outcome }).toEqual({
          effect: delivery.expect_effect,
          outcome: delivery.expect_effect === 'skip' ? 'duplicate' : delivery.outcome === 'throw' ? 'threw' : 'ran',
        });
      }
      // Every handler invocation counts, throwing ones included (see the contract's note on expected_effects).
      expect(invocations).toBe(c.expected_effects);
    },
  );
});

describe.each(['payload_schema', 'payload_schema_unicode'])('%s', (blockName) => {
  const block = manifest[blockName];
  it.each(list<Json>(block.cases, blockName).map((c) => [c.name, c]))('%s', (_name, c: Json) => {
    const violations = payloadViolations(block.schema, c.data);
    expect({ valid: violations.length === 0, violations }).toEqual({
      valid: c.valid,
      violations: c.valid ? [] : expect.arrayContaining([expect.any(String)]),
    });
  });
});

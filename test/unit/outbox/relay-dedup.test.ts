// The deduplicating relay's settings and migration, without a database or a broker.
import { checkDeduplication, DEFAULT_TAKE_OVER_AFTER_MS } from '../../../lib/outbox/relay-dedup.js';
import { OutboxRelay } from '../../../lib/outbox/relay.js';
import { outboxDeduplicationMigrationSql, outboxMigrationSql } from '../../../lib/outbox/table.js';
import { resolveOutbox } from '../../../lib/nest/module/outbox-option.js';
import { PulsarWebSocketClient } from '../../../lib/pulsar/websocket/index.js';
import type { PulsarClientLike } from '../../../lib/pulsar/client-types.js';

const client = { createProducer: async () => ({}), subscribe: async () => ({}), close: async () => null };
const pool = { connect: async () => ({ query: async () => ({ rows: [] }), release: () => undefined }) };
const raise = (message: string): never => {
  throw new Error(message);
};

describe('checkDeduplication', () => {
  it('keeps a name and a client, with the default take-over time', () => {
    expect(checkDeduplication({ producerName: 'orders-relay-0', client })).toEqual({
      producerName: 'orders-relay-0',
      client,
      takeOverAfterMs: DEFAULT_TAKE_OVER_AFTER_MS,
    });
  });

  it.each([
    ['no object', null, /must be \{ producerName, client \}/],
    ['a blank name', { producerName: ' ', client }, /producerName must be a non-empty string/],
    ['no name', { client }, /producerName must be a non-empty string .* got undefined/],
    ['no client', { producerName: 'r' }, /client must be a Pulsar client/],
    [
      'a negative take-over',
      { producerName: 'r', client, takeOverAfterMs: -1 },
      /takeOverAfterMs must be an integer >= 0/,
    ],
    ['a fractional take-over', { producerName: 'r', client, takeOverAfterMs: 1.5 }, /takeOverAfterMs/],
  ])('refuses %s', (_name, value, message) => expect(() => checkDeduplication(value)).toThrow(message));
});

describe('the relay with deduplication', () => {
  it('needs no producers of its own, and says once that the WebSocket API cannot carry the ids', () => {
    const warnings: string[] = [];
    const logger = { log: () => undefined, warn: (line: string) => void warnings.push(line), error: () => undefined };
    const websocket = new PulsarWebSocketClient({ serviceUrl: 'http://127.0.0.1:1' });
    new OutboxRelay({ pool, logger, deduplication: { producerName: 'r', client: websocket } });
    expect(warnings).toEqual([expect.stringMatching(/outbox relay r: the WebSocket API carries no sequence id/)]);
    warnings.length = 0;
    new OutboxRelay({
      pool,
      logger,
      deduplication: { producerName: 'r', client: client as unknown as PulsarClientLike },
    });
    expect(warnings).toEqual([]);
  });

  it('without deduplication still needs producers', () => {
    expect(() => new OutboxRelay({ pool })).toThrow(/needs options.producers/);
  });
});

describe('the migration', () => {
  it('adds the stamp columns and the sequence, idempotently, and is part of outboxMigrationSql', () => {
    const sql = outboxDeduplicationMigrationSql('app.outbox');
    expect(sql).toContain('ALTER TABLE app.outbox ADD COLUMN IF NOT EXISTS dedup_producer text;');
    expect(sql).toContain('ALTER TABLE app.outbox ADD COLUMN IF NOT EXISTS dedup_sequence bigint;');
    expect(sql).toContain('ALTER TABLE app.outbox ADD COLUMN IF NOT EXISTS dedup_stamped_at timestamptz;');
    expect(sql).toContain('CREATE SEQUENCE IF NOT EXISTS app.outbox_dedup_seq;');
    expect(outboxMigrationSql('app.outbox')).toContain(sql);
    expect(() => outboxDeduplicationMigrationSql('x; DROP TABLE y')).toThrow(/plain SQL identifier/);
  });
});

describe("the module's outbox.deduplication", () => {
  it('is kept, or null when not given', () => {
    expect(resolveOutbox({ pool, deduplication: { producerName: 'r-0' } }, 'outbox', raise).deduplication).toEqual({
      producerName: 'r-0',
    });
    expect(resolveOutbox({ pool }, 'outbox', raise).deduplication).toBeNull();
  });

  it.each([
    ['not an object', 'r-0', /outbox.deduplication must be \{ producerName, takeOverAfterMs\? \}/],
    ['an unknown key', { producerName: 'r', client }, /client/],
    ['no name', {}, /outbox.deduplication.producerName must be a non-empty string/],
    ['a bad take-over', { producerName: 'r', takeOverAfterMs: '5' }, /outbox.deduplication.takeOverAfterMs/],
  ])('refuses %s', (_name, deduplication, message) =>
    expect(() => resolveOutbox({ pool, deduplication }, 'outbox', raise)).toThrow(message),
  );
});

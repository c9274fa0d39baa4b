// A relay in a process of its own, for the test that SIGKILLs it mid-batch (test/integration/outbox/dedup-relay.test.ts).
// It kills itself with SIGKILL once the broker acknowledged RELAY_KILL_AFTER sends: the sends after it are in
// flight, and nothing was marked published, as when a relay dies between sending and marking.
// Env: BQ_PG_URL, RELAY_TABLE, RELAY_BATCH, RELAY_KILL_AFTER, RELAY_PRODUCER_NAME (none: no deduplication), and the
// test runner's BQ_TEST_CLIENT.
import pg from 'pg';
import { BabelProducerPool, OutboxRelay, type PulsarClientLike } from '../../../lib/index.js';
import type { PulsarProducer, PulsarProducerConfig } from '../../../lib/pulsar/index.js';
import { toLibraryClient } from '../../../lib/pulsar/library-client.js';
import { newClient } from '../broker.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const killAfter = Number(env('RELAY_KILL_AFTER'));
let acknowledged = 0;

/** The client under test, whose producers end this process after `killAfter` acknowledged sends. */
function killingClient(): PulsarClientLike {
  const library = toLibraryClient(newClient());
  return {
    async createProducer(config: PulsarProducerConfig): Promise<PulsarProducer> {
      const producer = await library.createProducer(config);
      return {
        send: async (message) => {
          const id = await producer.send(message);
          acknowledged += 1;
          if (acknowledged >= killAfter) process.kill(process.pid, 'SIGKILL');
          return id;
        },
        flush: () => producer.flush(),
        close: () => producer.close(),
        getTopic: () => producer.getTopic(),
      };
    },
    subscribe: (config) => library.subscribe(config),
    close: () => library.close(),
  };
}

const pool = new pg.Pool({ connectionString: env('BQ_PG_URL'), max: 2 });
const client = killingClient();
const producerName = process.env.RELAY_PRODUCER_NAME;
const quiet = { log: () => undefined, warn: () => undefined, error: (line: string) => console.error(line) };
const relay = new OutboxRelay({
  pool,
  table: env('RELAY_TABLE'),
  batchSize: Number(env('RELAY_BATCH')),
  logger: quiet,
  ...(producerName ? { deduplication: { producerName, client } } : { producers: new BabelProducerPool(client) }),
});
await relay.flush();
// Reached only when the batch was smaller than RELAY_KILL_AFTER: the test sees a normal exit and fails.
await relay.stop();
await pool.end();
await client.close();

// Stops the broker only when global setup started it.
import { stopBroker } from '../../scripts/lib/broker.mjs';
import { stopSecuredBroker } from '../../scripts/lib/secured-broker.mjs';
import { stopPostgres } from '../../scripts/lib/postgres.mjs';
import { stopRedis } from '../../scripts/lib/redis.mjs';

export default async function globalTeardown() {
  if (process.env.BQ_SECURED_DEFER_STOP !== '1') await stopSecuredBroker(undefined, process.env.BQ_SECURED_OWNER);
  if (globalThis.__bqRedis?.started) await stopRedis();
  if (globalThis.__bqPostgres?.started) await stopPostgres();
  const broker = globalThis.__bqBroker;
  if (!broker?.started) return;
  broker.started = false;
  await stopBroker();
}

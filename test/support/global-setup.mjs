// Makes a real Pulsar broker available to the integration and interop suites (starting one if needed).
import { ensureBroker } from '../../scripts/lib/broker.mjs';
import { ensurePostgres } from '../../scripts/lib/postgres.mjs';
import { ensureRedis } from '../../scripts/lib/redis.mjs';
import { ensureChromium } from '../../scripts/lib/chromium.mjs';

export default async function globalSetup() {
  // The secured broker (test/integration/security) is started lazily by the first suite that needs it; the one
  // who owns it stops it: this Jest run, or scripts/run-tests.mjs when it set the owner for all its runs.
  process.env.BQ_SECURED_OWNER ??= `jest-${process.pid}`;
  if (globalThis.__bqBroker) return;
  // The idempotency suites' Redis store runs against a real Redis (milliseconds to start).
  const redis = await ensureRedis();
  globalThis.__bqRedis = redis;
  process.env.BQ_REDIS_URL = redis.url;
  // The dashboard suite drives Debian's headless Chromium (apt-get install chromium when missing).
  process.env.BQ_CHROMIUM = ensureChromium();
  // The outbox suites write to a real PostgreSQL (reused when scripts/run-tests.mjs started one).
  const postgres = await ensurePostgres();
  globalThis.__bqPostgres = postgres;
  process.env.BQ_PG_URL = postgres.url;
  const broker = await ensureBroker();
  globalThis.__bqBroker = broker;
  // Workers start after global setup and inherit these.
  process.env.PULSAR_WEB_URL = broker.webUrl;
  process.env.PULSAR_SERVICE_URL = broker.serviceUrl;
}

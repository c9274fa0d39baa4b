// Makes a real Pulsar broker available to the integration and interop suites (starting one if needed).
import { ensureBroker } from '../../scripts/lib/broker.mjs';

export default async function globalSetup() {
  if (globalThis.__bqBroker) return;
  const broker = await ensureBroker();
  globalThis.__bqBroker = broker;
  // Workers start after global setup and inherit these.
  process.env.PULSAR_WEB_URL = broker.webUrl;
  process.env.PULSAR_SERVICE_URL = broker.serviceUrl;
}

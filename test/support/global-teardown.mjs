// Stops the broker only when global setup started it.
import { stopBroker } from '../../scripts/lib/broker.mjs';

export default async function globalTeardown() {
  const broker = globalThis.__bqBroker;
  if (!broker?.started) return;
  broker.started = false;
  await stopBroker();
}

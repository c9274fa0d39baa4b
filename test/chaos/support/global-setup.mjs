// The chaos project runs against a broker of its own (other ports, its own data), because it kills and
// restarts it; the shared development broker is never touched.
import { brokerAnswers, brokerSettings, startBroker } from '../../../scripts/lib/broker.mjs';

export const chaosEnv = () => ({
  ...process.env,
  PULSAR_WEB_PORT: process.env.BQ_CHAOS_WEB_PORT ?? '18080',
  PULSAR_BROKER_PORT: process.env.BQ_CHAOS_BROKER_PORT ?? '16650',
});

export default async function globalSetup() {
  const settings = brokerSettings(chaosEnv());
  process.env.BQ_CHAOS_WEB_URL = settings.webUrl;
  process.env.BQ_CHAOS_SERVICE_URL = settings.serviceUrl;
  // BQ_CHAOS_STANDALONE=0: only the cluster scenarios run (they start a cluster of their own), so no standalone.
  if (process.env.BQ_CHAOS_STANDALONE === '0') return;
  const answering = await brokerAnswers(settings.webUrl);
  if (!answering) await startBroker(settings);
  process.env.BQ_CHAOS_WEB_URL = settings.webUrl;
  process.env.BQ_CHAOS_SERVICE_URL = settings.serviceUrl;
  process.env.BQ_CHAOS_STARTED = answering ? '' : '1';
}

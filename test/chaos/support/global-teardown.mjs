import { brokerSettings, stopBroker } from '../../../scripts/lib/broker.mjs';
import { chaosEnv } from './global-setup.mjs';

export default async function globalTeardown() {
  // Only a broker this run started is stopped; one left running on purpose (BQ_CHAOS_KEEP=1) is kept.
  if (process.env.BQ_CHAOS_STARTED === '1' && process.env.BQ_CHAOS_KEEP !== '1') {
    await stopBroker(brokerSettings(chaosEnv()));
  }
}

// The parity scenarios on the testing kit: no broker, the real module, server, settlement and Nest pipeline.
import { jest } from '@jest/globals';
import { InMemoryPulsar, useInMemoryPulsar } from '../../../lib/testing/index.js';
import { expectedFingerprints } from '../../support/parity-expected.js';
import { fingerprint, scenarios, startParityApp, type ParityRun } from '../../support/parity-scenarios.js';

jest.setTimeout(20_000);

describe('testing kit parity scenarios (in memory)', () => {
  it.each(scenarios.map((scenario) => [scenario.name, scenario] as const))('%s', async (name, scenario) => {
    const pulsar = new InMemoryPulsar();
    const run: ParityRun = {
      // Never contacted: the kit replaces the client this URL would create.
      serviceUrl: 'pulsar://no-broker.invalid:6650',
      prepare: (builder) => useInMemoryPulsar(builder, pulsar),
      elapse: async (ms, ready) => {
        while (!ready()) await new Promise((resolve) => setTimeout(resolve, 5));
        pulsar.advance(ms);
      },
    };
    const topic = `parity-${scenarios.indexOf(scenario)}`;
    const app = await startParityApp(run, topic, scenario.options?.());
    try {
      const outcome = await scenario.play(app, run);
      expect(fingerprint(outcome, topic)).toEqual(expectedFingerprints[name]);
    } finally {
      await app.close();
    }
  });
});

// The parity scenarios on the real broker, with the client under test: the same fingerprints as on the testing kit.
import { jest } from '@jest/globals';
import { serviceUrl, sleep, uniqueTopic } from '../../support/broker.js';
import { expectedFingerprints } from '../../support/parity-expected.js';
import { fingerprint, scenarios, startParityApp, type ParityRun } from '../../support/parity-scenarios.js';

jest.setTimeout(60_000);

const run: ParityRun = {
  serviceUrl: serviceUrl(),
  prepare: (builder) => builder,
  // The broker's clock: the retry copy's delivery time passes for real.
  elapse: async (ms, ready) => {
    while (!ready()) await sleep(20);
    await sleep(ms);
  },
};

describe('testing kit parity scenarios (real broker)', () => {
  it.each(scenarios.map((scenario) => [scenario.name, scenario] as const))('%s', async (name, scenario) => {
    const topic = uniqueTopic('parity');
    const app = await startParityApp(run, topic, scenario.options?.());
    try {
      const outcome = await scenario.play(app, run);
      expect(fingerprint(outcome, topic)).toEqual(expectedFingerprints[name]);
    } finally {
      await app.close();
    }
  });
});

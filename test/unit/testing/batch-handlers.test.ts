// The batch-handler scenario of the real-broker suite, on the testing kit's InMemoryPulsar: the same outcome.
import { jest } from '@jest/globals';
import { InMemoryPulsar } from '../../../lib/testing/index.js';
import { expectBatchOutcome, playBatchScenario, startBatchService } from '../../support/batch-scenario.js';

jest.setTimeout(20_000);

describe('batch handlers (testing kit)', () => {
  it('hands over one batch and settles each message on its own', async () => {
    const pulsar = new InMemoryPulsar();
    const service = await startBatchService(pulsar, 'batch-handlers');
    try {
      await playBatchScenario(pulsar, 'batch-handlers', service);
      expectBatchOutcome(service);
    } finally {
      await service.close();
    }
  });
});

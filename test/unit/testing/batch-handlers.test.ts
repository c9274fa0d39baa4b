// The batch-handler scenario of the real-broker suite, on the testing kit's InMemoryPulsar: the same outcome.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler } from '../../../lib/index.js';
import { InMemoryPulsar } from '../../../lib/testing/index.js';
import { expectBatchOutcome, playBatchScenario, publishTo, startBatchService } from '../../support/batch-scenario.js';
import { startService } from '../../support/nest-app.js';

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

@Controller()
class SlowToFill {
  static calls = 0;

  // The batch is handed over after 300 ms, later than the 100 ms time-out: the wait does not count against it.
  @BabelHandler('urn:babel:batch:slow-to-fill', { timeoutMs: 100, batch: { maxMessages: 10, maxWaitMs: 300 } })
  handle(@Payload() items: unknown[]) {
    SlowToFill.calls += items.length;
  }
}

describe('batch handler time-out', () => {
  it('adds maxWaitMs to the time-out, so the wait for the batch does not use it up', async () => {
    const pulsar = new InMemoryPulsar();
    const service = await startService([SlowToFill], { client: pulsar, topics: 'slow-to-fill' });
    try {
      await publishTo(pulsar, 'slow-to-fill', [['urn:babel:batch:slow-to-fill', { n: 1 }]]);
      while (service.settled.length < 1) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(service.settled.map(({ action }) => action)).toEqual(['ack']);
      expect(SlowToFill.calls).toBe(1);
    } finally {
      await service.close();
    }
  });
});

// Batch handlers through the real broker, on the client under test (the testing kit plays the same scenario).
import { jest } from '@jest/globals';
import type { PulsarClientLike } from '../../../lib/index.js';
import { newClient, uniqueTopic } from '../../support/broker.js';
import { expectBatchOutcome, playBatchScenario, startBatchService } from '../../support/batch-scenario.js';
import type { RunningService } from '../../support/nest-app.js';

jest.setTimeout(60_000);

let client: PulsarClientLike;
let service: RunningService;
let topic: string;
beforeAll(async () => {
  client = newClient();
  topic = uniqueTopic('batch-handlers');
  service = await startBatchService(client, topic);
});
afterAll(async () => {
  await service.close();
  await client.close();
});

describe('batch handlers (real broker)', () => {
  it('hands over one batch and settles each message on its own', async () => {
    await playBatchScenario(client, topic, service);
    expectBatchOutcome(service);
  });
});

// Test.createTestingModule(...).overrideProvider(X).useValue(plainObject): the standard Nest way to stub a provider
// must never break the module's shutdown (app.close()).
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import {
  BABEL_PULSAR_CLIENT,
  BabelProducerPool,
  BabelPulsarClient,
  BabelPulsarServer,
  BabelQueueHealthIndicator,
  BabelQueueModule,
  BabelQueueRedrive,
} from '../../../../lib/index.js';
import { InMemoryPulsar } from '../../../../lib/testing/index.js';

const tokens: Array<[string, unknown]> = [
  ['BabelPulsarClient', BabelPulsarClient],
  ['BabelPulsarServer', BabelPulsarServer],
  ['BabelProducerPool', BabelProducerPool],
  ['BabelQueueHealthIndicator', BabelQueueHealthIndicator],
  ['BabelQueueRedrive', BabelQueueRedrive],
  ['BABEL_PULSAR_CLIENT', BABEL_PULSAR_CLIENT],
];

describe('overrideProvider(...).useValue(plain object)', () => {
  it.each(tokens)('of %s: the app starts and app.close() resolves', async (_name, token) => {
    const moduleRef = await Test.createTestingModule({
      imports: [BabelQueueModule.forRoot({ client: new InMemoryPulsar(), topic: 'orders', startupWarnings: false })],
    })
      .overrideProvider(token)
      .useValue({ publish: jest.fn() })
      .compile();
    // Nest 12 logs a failing shutdown hook instead of rejecting app.close(): an error logged is a failure too.
    const errors: unknown[] = [];
    const logger = { log() {}, warn() {}, debug() {}, verbose() {}, error: (...args: unknown[]) => errors.push(args) };
    const app = moduleRef.createNestApplication({ logger });
    await app.init();
    await expect(app.close()).resolves.toBeUndefined();
    expect(errors).toEqual([]);
  });
});

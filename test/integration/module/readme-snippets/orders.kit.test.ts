// README snippet: testing with the kit (no broker), beside app.module.ts.
// (The README imports from the package; describe/it/expect are the globals of Jest and of Nest 12's Vitest.)
import { Test } from '@nestjs/testing';
import { BabelPulsarClient, BabelPulsarServer } from '../../../../lib/index.js';
import { BabelQueueTestHarness, InMemoryPulsar, useInMemoryPulsar } from '../../../../lib/testing/index.js';
import { AppModule, InvoicesService } from './app.module.js'; // Nest 11 + Jest (CommonJS): './app.module'

describe('OrdersController', () => {
  it('invoices a created order, and dead-letters one that keeps failing', async () => {
    const pulsar = new InMemoryPulsar(); // a broker in the test process
    const moduleRef = await useInMemoryPulsar(Test.createTestingModule({ imports: [AppModule] }), pulsar).compile();
    const app = moduleRef.createNestMicroservice({ strategy: moduleRef.get(BabelPulsarServer) });
    await app.listen();
    const harness = await BabelQueueTestHarness.attach(moduleRef.get(BabelPulsarServer), pulsar);
    try {
      const ok = await harness.publish('urn:babel:orders:created', { order_id: 7, total: 42 });
      expect((await ok.outcome()).kind).toBe('handled');
      expect(app.get(InvoicesService).invoiced.get(7)).toBe(42);

      const bad = await harness.publish('urn:babel:orders:created', { order_id: 8, total: -1 });
      const outcome = await bad.outcome();
      expect(outcome.kind).toBe('dead-lettered');
      expect(outcome.retries.map((copy) => copy.properties['bq-attempts'])).toEqual(['1', '2']);
      expect(outcome.deadLetter?.properties['bq-dead-letter-error']).toBe('order 8 has a negative total');

      // What the app publishes is there to read, too.
      await app.get(BabelPulsarClient).publish('urn:babel:orders:cancelled', { order_id: 7 });
      expect(pulsar.published('orders').at(-1)?.properties['bq-job']).toBe('urn:babel:orders:cancelled');
    } finally {
      await harness.close();
      await app.close();
    }
  });
});

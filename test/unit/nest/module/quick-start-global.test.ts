// The README's quick start registers the module with isGlobal, so a feature module that injects BabelPulsarClient
// resolves it; without isGlobal (and without importing the registering module) Nest refuses the feature module.
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { BabelPulsarClient, BabelQueueModule } from '../../../../lib/index.js';
import { InMemoryPulsar, useInMemoryPulsar } from '../../../../lib/testing/index.js';
import { AppModule } from '../../../integration/module/readme-snippets/app.module.js';

@Injectable()
class BillingService {
  constructor(readonly babel: BabelPulsarClient) {}
}

@Module({ providers: [BillingService] })
class BillingModule {}

describe('the quick start and feature modules', () => {
  it("a feature module injects the quick start's BabelPulsarClient (isGlobal)", async () => {
    const pulsar = new InMemoryPulsar();
    const moduleRef = await useInMemoryPulsar(
      Test.createTestingModule({ imports: [AppModule, BillingModule] }),
      pulsar,
    ).compile();
    const billing = moduleRef.get(BillingService);
    expect(billing.babel).toBe(moduleRef.get(BabelPulsarClient));
    await billing.babel.publish('urn:babel:billing:paid', { order_id: 1 });
    expect(pulsar.published('orders').map((message) => message.properties['bq-job'])).toEqual([
      'urn:babel:billing:paid',
    ]);
    await moduleRef.close();
  });

  it('without isGlobal, Nest cannot resolve it in a feature module that does not import the registering one', async () => {
    @Module({ imports: [BabelQueueModule.forRoot({ client: new InMemoryPulsar(), topic: 'orders' })] })
    class RootModule {}
    await expect(Test.createTestingModule({ imports: [RootModule, BillingModule] }).compile()).rejects.toThrow(
      /can't resolve dependencies of the BillingService \(\?\)/,
    );
  });
});

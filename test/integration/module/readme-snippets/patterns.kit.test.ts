// README snippet: a topic-pattern handler, tried with the testing kit (no broker).
import { describe, expect, it } from '@jest/globals';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, Payload } from '@nestjs/microservices';
import { BabelContext, BabelHandler, BabelPulsarServer } from '../../../../lib/index.js';
import { BabelQueueTestHarness, InMemoryPulsar } from '../../../../lib/testing/index.js';

@Controller()
class AuditController {
  static readonly seen: string[] = [];

  // Every topic of public/default named events-<something>, including those created while the app runs.
  @BabelHandler('urn:babel:audit:event', { topicsPattern: 'events-.+', patternDiscoveryMs: 5000 })
  record(@Payload() _event: { action: string }, @Ctx() ctx: BabelContext) {
    AuditController.seen.push(ctx.getTopic()); // the message's own topic (events-shipping), never the pattern
  }
}

@Module({ controllers: [AuditController] })
class AuditModule {}

describe('AuditController', () => {
  it('consumes every topic that matches', async () => {
    const pulsar = new InMemoryPulsar();
    for (const topic of ['events-billing', 'events-shipping', 'events-billing.dlq'])
      await (await pulsar.createProducer({ topic })).send({ data: Buffer.from('{}') });
    const server = new BabelPulsarServer({ client: pulsar, topics: 'events-billing' });
    const app = await NestFactory.createMicroservice(AuditModule, { strategy: server, logger: false });
    await app.listen();
    // The dead-letter topic matches the expression but is never consumed (its records would loop).
    expect(server.describe().map(({ topic }) => topic)).toEqual([
      'persistent://public/default/events-billing',
      'persistent://public/default/events-shipping',
    ]);
    const harness = await BabelQueueTestHarness.attach(server, pulsar);
    try {
      const sent = await harness.publish('urn:babel:audit:event', { action: 'ship' }, { topic: 'events-shipping' });
      expect((await sent.outcome()).kind).toBe('handled');
      expect(AuditController.seen).toEqual(['events-shipping']); // named as the pattern is written
    } finally {
      await harness.close();
      await app.close();
    }
  });
});

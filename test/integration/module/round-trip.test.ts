// A round trip through the public API only: an HTTP controller publishes with BabelPulsarClient, a @BabelHandler
// in another module consumes it, and the envelope it sees carries the trace id, meta.queue and meta.lang.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Body, Controller, Headers, HttpCode, Inject, Injectable, Module, Post } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { BabelContext, BabelHandler, BabelPulsarClient, BabelQueueModule, type Envelope } from '../../../lib/index.js';
import { rootModule, startHybrid } from './support/apps.js';
import { quietLogger, serviceUrl, uniqueTopic, waitFor } from './support/helpers.js';

jest.setTimeout(60_000);

const ORDER_PLACED = 'urn:babel:orders:placed';

// --- the ordering side: HTTP in, publish out ---
@Controller('orders')
class OrdersController {
  constructor(@Inject(BabelPulsarClient) private readonly babel: BabelPulsarClient) {}

  @Post()
  @HttpCode(202)
  async place(@Body() order: { id: number; total: number }, @Headers('x-trace-id') traceId?: string) {
    const messageId = await this.babel.publish(
      ORDER_PLACED,
      { order_id: order.id, total: order.total },
      traceId ? { traceId } : {},
    );
    return { messageId };
  }
}

@Module({ controllers: [OrdersController] })
class OrdersModule {}

// --- the shipping side: consumes in another module ---
@Injectable()
class ShippingLog {
  readonly received: Array<{
    data: unknown;
    envelope: Envelope;
    properties: Record<string, string>;
    topic: string;
    attempts: number;
  }> = [];
}

@Controller()
class ShippingController {
  constructor(@Inject(ShippingLog) private readonly log: ShippingLog) {}

  @BabelHandler(ORDER_PLACED)
  onOrderPlaced(@Payload() data: { order_id: number }, @Ctx() ctx: BabelContext) {
    this.log.received.push({
      data,
      envelope: ctx.getEnvelope(),
      properties: ctx.getProperties(),
      topic: ctx.getTopic(),
      attempts: ctx.getAttempts(),
    });
  }
}

@Module({ controllers: [ShippingController], providers: [ShippingLog], exports: [ShippingLog] })
class ShippingModule {}

describe('round trip through the public API (live broker)', () => {
  it('HTTP → BabelPulsarClient.publish → Pulsar → @BabelHandler in another module', async () => {
    const topic = uniqueTopic('roundtrip');
    const root = rootModule({
      imports: [
        BabelQueueModule.forRoot({ serviceUrl: serviceUrl(), topic, isGlobal: true, logger: quietLogger }),
        OrdersModule,
        ShippingModule,
      ],
    });
    const { app, url } = await startHybrid(root);
    try {
      const response = await fetch(`${url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-trace-id': 'trace-from-the-edge' },
        body: JSON.stringify({ id: 1042, total: 99.5 }),
      });
      expect(response.status).toBe(202);
      const { messageId } = (await response.json()) as { messageId: string };

      const log = app.get(ShippingLog);
      const [received] = await waitFor('the shipping handler', () => (log.received.length ? log.received : null));
      expect(received!.data).toEqual({ order_id: 1042, total: 99.5 });
      expect(received!.envelope).toMatchObject({
        job: ORDER_PLACED,
        trace_id: 'trace-from-the-edge',
        attempts: 0,
        meta: { id: messageId, queue: topic, lang: 'node', schema_version: 1 },
      });
      expect(received!.properties).toMatchObject({
        'bq-trace-id': 'trace-from-the-edge',
        'bq-job': ORDER_PLACED,
        'bq-message-id': messageId,
      });
      expect(received!.topic).toBe(topic);
      expect(received!.attempts).toBe(0);
    } finally {
      await app.close();
    }
  });
});

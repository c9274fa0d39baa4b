// One batch-handler scenario, played on the real broker (both clients) and on the testing kit's InMemoryPulsar.
import { Controller, Injectable, UseInterceptors, type CallHandler, type NestInterceptor } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import {
  BabelBatchContext,
  BabelHandler,
  BabelNonRetriableError,
  EnvelopeCodec,
  type PulsarClientLike,
  type SettledEvent,
} from '../../lib/index.js';
import { pulsarProperties } from '../../lib/pulsar/index.js';
import { startService, type RunningService } from './nest-app.js';

type Order = {
  n: number;
  /** `retry`: fails its first delivery; `dead`: not retriable; absent: succeeds. */
  fail?: 'retry' | 'dead';
};

/** Each call of a batch handler: the order numbers and attempts it received. */
export const batches: Array<{ urn: string; orders: number[]; attempts: number[] }> = [];

/** Puts the handler behind Nest's pipeline (no direct call), so a batch failure goes through the failure relay. */
@Injectable()
class PassThrough implements NestInterceptor {
  intercept(_context: unknown, next: CallHandler) {
    return next.handle();
  }
}

@Controller()
class BatchOrders {
  @BabelHandler('urn:babel:batch:orders', { batch: { maxMessages: 5, maxWaitMs: 2500 } })
  orders(@Payload() orders: Order[], @Ctx() ctx: BabelBatchContext) {
    batches.push({
      urn: 'urn:babel:batch:orders',
      orders: orders.map(({ n }) => n),
      attempts: ctx.getMessages().map((message) => message.getAttempts()),
    });
    orders.forEach((order, index) => {
      if (order.fail === 'dead') ctx.fail(index, new BabelNonRetriableError(`order ${order.n} is malformed`));
      else if (order.fail === 'retry' && ctx.getMessage(index).getAttempts() === 0)
        ctx.fail(index, new Error(`order ${order.n}: stock service busy`));
    });
  }

  @BabelHandler('urn:babel:batch:all-fail', { batch: { maxMessages: 2, maxWaitMs: 1500 } })
  @UseInterceptors(PassThrough)
  allFail(@Payload() orders: Order[]) {
    batches.push({ urn: 'urn:babel:batch:all-fail', orders: orders.map(({ n }) => n), attempts: [] });
    throw new BabelNonRetriableError('ledger closed');
  }
}

export async function startBatchService(client: PulsarClientLike, topic: string): Promise<RunningService> {
  batches.length = 0;
  return startService([BatchOrders], { client, topics: topic, maxAttempts: 3 }, [PassThrough]);
}

export async function publishTo(client: PulsarClientLike, topic: string, messages: Array<[string, Order] | string>) {
  const producer = await client.createProducer({ topic });
  for (const message of messages) {
    if (typeof message === 'string') {
      await producer.send({ data: Buffer.from(message) });
      continue;
    }
    const envelope = EnvelopeCodec.make(message[0], message[1], { queue: topic });
    await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
  }
  await producer.close();
}

/** The settled events of one order, in order, as `action` or `action:reason`. */
export function settlementsOf(settled: readonly SettledEvent[], urn: string): string[] {
  return settled.filter((event) => event.urn === urn).map((e) => (e.reason ? `${e.action}:${e.reason}` : e.action));
}

/** Publishes the scenario's messages and waits until all of them settled for good. */
export async function playBatchScenario(client: PulsarClientLike, topic: string, service: RunningService) {
  await publishTo(client, topic, [
    ['urn:babel:batch:orders', { n: 1 }],
    'not json {',
    ['urn:babel:batch:orders', { n: 2, fail: 'retry' }],
    ['urn:babel:batch:unknown', { n: 99 }],
    ['urn:babel:batch:orders', { n: 3 }],
    ['urn:babel:batch:orders', { n: 4, fail: 'dead' }],
    ['urn:babel:batch:orders', { n: 5 }],
    ['urn:babel:batch:all-fail', { n: 6 }],
    ['urn:babel:batch:all-fail', { n: 7 }],
  ]);
  // 9 deliveries, plus the retry copy of order 2 and the two of the unknown URN (retried up to maxAttempts).
  const deadline = Date.now() + 30_000;
  while (service.settled.length < 12) {
    if (Date.now() > deadline) throw new Error(`only ${service.settled.length} of 12 deliveries settled`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** What both runs must show. */
export function expectBatchOutcome(service: RunningService): void {
  const orderBatches = batches.filter(({ urn }) => urn === 'urn:babel:batch:orders');
  // The five valid orders in one batch (poison and unknown URN never join it), then order 2's retry alone.
  expect(orderBatches).toEqual([
    { urn: 'urn:babel:batch:orders', orders: [1, 2, 3, 4, 5], attempts: [0, 0, 0, 0, 0] },
    { urn: 'urn:babel:batch:orders', orders: [2], attempts: [1] },
  ]);
  expect(batches.filter(({ urn }) => urn === 'urn:babel:batch:all-fail')).toEqual([
    { urn: 'urn:babel:batch:all-fail', orders: [6, 7], attempts: [] },
  ]);
  const actions = service.settled.map((event) => `${event.urn ?? 'poison'} ${event.action}:${event.reason ?? ''}`);
  expect(actions.filter((a) => a.startsWith('urn:babel:batch:orders')).sort()).toEqual(
    [
      'urn:babel:batch:orders ack:', // 1
      'urn:babel:batch:orders retry:', // 2, first delivery
      'urn:babel:batch:orders ack:', // 2, retry copy
      'urn:babel:batch:orders ack:', // 3
      'urn:babel:batch:orders dead-letter:failed', // 4
      'urn:babel:batch:orders ack:', // 5
    ].sort(),
  );
  expect(actions.filter((a) => !a.startsWith('urn:babel:batch:orders')).sort()).toEqual(
    [
      'poison dead-letter:poison',
      'urn:babel:batch:unknown retry:',
      'urn:babel:batch:unknown retry:',
      'urn:babel:batch:unknown dead-letter:unknown_urn',
      'urn:babel:batch:all-fail dead-letter:failed',
      'urn:babel:batch:all-fail dead-letter:failed',
    ].sort(),
  );
  for (const event of service.settled.filter(({ action }) => action === 'dead-letter' || action === 'retry'))
    expect(event.written).toBe(true);
}

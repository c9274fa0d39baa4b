// A handler that never settles counts as a failed attempt after its time-out, frees its
// slot (the consumer keeps going), and shows as overdue in logs, describe(), status and health.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx } from '@nestjs/microservices';
import {
  BabelContext,
  BabelHandler,
  EnvelopeCodec,
  HandlerTimeoutError,
  type BabelServerStatus,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { newClient, receiveN, uniqueTopic, waitFor } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(60_000);

let client: PulsarClientLike & { close(): Promise<unknown> };
let service: RunningService | null = null;
const release: Array<() => void> = [];
beforeAll(() => {
  client = newClient();
});
afterEach(async () => {
  release.splice(0).forEach((resolve) => resolve());
  await service?.close();
  service = null;
});
afterAll(async () => {
  await client.close();
});

const HANGS_ONCE = 'urn:babel:reliability:hangs-once';
const HANGS_ALWAYS = 'urn:babel:reliability:hangs-always';

async function publish(topic: string, urn: string, data: Record<string, unknown>): Promise<void> {
  const envelope = EnvelopeCodec.make(urn, data, { queue: topic });
  const producer = await client.createProducer({ topic });
  await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
  await producer.close();
}

const hang = () => new Promise<void>((resolve) => release.push(resolve));

it('times a hung handler out (per-handler timeoutMs), retries it and keeps consuming; reports the overdue handler', async () => {
  const topic = uniqueTopic('hangs');
  const handled: Array<{ n: unknown; attempts: number }> = [];
  const errors: Error[] = [];
  const warnings: string[] = [];
  @Controller()
  class Hanging {
    @BabelHandler(HANGS_ONCE, { timeoutMs: 400 })
    async handle(@Ctx() ctx: BabelContext) {
      if (ctx.getAttempts() === 0 && ctx.getEnvelope().data.n === 1) return hang();
      handled.push({ n: ctx.getEnvelope().data.n, attempts: ctx.getAttempts() });
    }
  }
  service = await startService([Hanging], {
    client,
    topics: topic,
    concurrency: 1,
    handlerTimeoutMs: 0, // the server default is off here: the handler's own 400 ms applies
    onError: (error) => void errors.push(error),
    logger: { log: () => {}, warn: (m: string) => void warnings.push(m), error: () => {}, debug: () => {} },
  });
  const statuses: BabelServerStatus[] = [];
  service.server.status.subscribe((status) => statuses.push(status));
  await publish(topic, HANGS_ONCE, { n: 1 });
  await publish(topic, HANGS_ONCE, { n: 2 });
  await waitFor('both messages handled', () => handled.length === 2);
  expect(handled).toEqual(
    expect.arrayContaining([
      { n: 2, attempts: 0 },
      { n: 1, attempts: 1 },
    ]),
  );
  expect(errors).toHaveLength(1);
  expect(errors[0]).toBeInstanceOf(HandlerTimeoutError);
  expect(service.settled).toContainEqual(expect.objectContaining({ action: 'retry', attempt: 1 }));
  expect(service.server.describe()).toEqual([expect.objectContaining({ topic, overdue: 1 })]);
  expect(warnings.some((w) => w.includes('did not settle within 400 ms'))).toBe(true);
  await waitFor('status stalled', () => statuses.includes('stalled'), 5_000);

  release.splice(0).forEach((resolve) => resolve());
  await waitFor('the overdue handler to end', () => service!.server.describe()[0]!.overdue === 0);
  await waitFor('status connected again', () => statuses.at(-1) === 'connected', 5_000);
  expect(warnings.some((w) => w.includes('ended') && w.includes('after its time-out'))).toBe(true);
});

it('dead-letters a handler that always hangs after maxAttempts time-outs (server default handlerTimeoutMs)', async () => {
  const topic = uniqueTopic('hangs-always');
  const dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
  @Controller()
  class AlwaysHanging {
    @BabelHandler(HANGS_ALWAYS)
    handle() {
      return hang();
    }
  }
  service = await startService([AlwaysHanging], { client, topics: topic, maxAttempts: 2, handlerTimeoutMs: 300 });
  await publish(topic, HANGS_ALWAYS, { n: 1 });
  const [record] = await receiveN(dlq, 1);
  await dlq.close();
  expect(JSON.parse(record!.getData().toString('utf8')).dead_letter).toMatchObject({
    reason: 'failed',
    exception: 'HandlerTimeoutError',
    attempts: 2,
  });
  expect(service.server.describe()[0]!.overdue).toBe(2);
});

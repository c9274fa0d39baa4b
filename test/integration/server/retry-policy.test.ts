// Retry spacing and non-retriable failures through the real broker, on the client under test.
import { jest } from '@jest/globals';
import {
  BadRequestException,
  CanActivate,
  Controller,
  Injectable,
  PipeTransform,
  UseGuards,
  UsePipes,
} from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import {
  BabelContext,
  BabelHandler,
  BabelNonRetriableError,
  EnvelopeCodec,
  type PulsarClientLike,
} from '../../../lib/index.js';
import { pulsarProperties, type PulsarConsumer } from '../../../lib/pulsar/index.js';
import { expectNothing, newClient, receiveN, uniqueTopic, waitFor } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(90_000);

interface Delivery {
  urn: string;
  at: number;
  attempts: number;
  delayProperty: string | undefined;
}
const deliveries: Delivery[] = [];
const lines: Array<{ level: string; text: string }> = [];
const capture = (level: string) => (text: string) => void lines.push({ level, text });

function record(ctx: BabelContext): void {
  deliveries.push({
    urn: ctx.getUrn(),
    at: Date.now(),
    attempts: ctx.getAttempts(),
    delayProperty: ctx.getProperties()['bq-delay'],
  });
}

/** What ValidationPipe throws: a BadRequestException whose response lists every broken constraint. */
class OrderLinesPipe implements PipeTransform {
  transform(value: { qty?: unknown; sku?: unknown }) {
    const problems: string[] = [];
    if (typeof value.sku !== 'string') problems.push('sku must be a string');
    if (typeof value.qty !== 'number' || value.qty < 1) problems.push('qty must not be less than 1');
    if (problems.length > 0) throw new BadRequestException(problems);
    return value;
  }
}

@Injectable()
class DenyAll implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

@Controller()
class Orders {
  @BabelHandler('urn:babel:orders:spaced')
  spaced(@Ctx() ctx: BabelContext) {
    record(ctx);
    throw new Error('warehouse unavailable');
  }

  @BabelHandler('urn:babel:orders:fixed', { maxAttempts: 3, retryPolicy: { backoff: 'fixed', initialDelayMs: 1500 } })
  fixed(@Ctx() ctx: BabelContext) {
    record(ctx);
    throw new Error('still down');
  }

  @BabelHandler('urn:babel:orders:validated')
  @UsePipes(new OrderLinesPipe())
  validated(@Payload() _data: unknown, @Ctx() ctx: BabelContext) {
    record(ctx);
  }

  @BabelHandler('urn:babel:orders:refused')
  refused(@Ctx() ctx: BabelContext) {
    record(ctx);
    throw new BabelNonRetriableError('customer 9 is closed');
  }

  @BabelHandler('urn:babel:orders:guarded')
  @UseGuards(DenyAll)
  guarded(@Ctx() ctx: BabelContext) {
    record(ctx);
  }
}

let client: PulsarClientLike;
let service: RunningService;
let topic: string;
let dlq: PulsarConsumer;
beforeAll(async () => {
  client = newClient();
  topic = uniqueTopic('retry-policy');
  dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
  service = await startService(
    [Orders],
    {
      client,
      topics: topic,
      maxAttempts: 3,
      retryPolicy: { backoff: 'exponential', initialDelayMs: 1000, maxDelayMs: 8000 },
      logger: { log: capture('log'), warn: capture('warn'), error: capture('error') },
    },
    [DenyAll],
  );
});
afterAll(async () => {
  await service.close();
  await dlq.close();
  await client.close();
});
beforeEach(() => {
  deliveries.length = 0;
  lines.length = 0;
});

async function publish(urn: string, data: Record<string, unknown> = {}) {
  const envelope = EnvelopeCodec.make(urn, data, { queue: topic });
  const producer = await client.createProducer({ topic });
  await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
  await producer.close();
}

async function nextDeadLetter() {
  const [message] = await receiveN(dlq, 1, 30_000);
  await dlq.acknowledge(message!);
  return { body: JSON.parse(message!.getData().toString()), properties: message!.getProperties() };
}

const gaps = () => deliveries.slice(1).map((delivery, index) => delivery.at - deliveries[index]!.at);
const failureLines = () => lines.filter(({ text }) => text.startsWith('message failed:'));

describe('retry policy (real broker)', () => {
  it('spaces retries exponentially through the broker and marks the copies with bq-delay', async () => {
    await publish('urn:babel:orders:spaced');
    const { body } = await nextDeadLetter();
    expect(body.dead_letter).toMatchObject({ reason: 'failed', error: 'warehouse unavailable', attempts: 3 });
    expect(deliveries.map(({ attempts }) => attempts)).toEqual([0, 1, 2]);
    expect(deliveries.map(({ delayProperty }) => delayProperty)).toEqual([undefined, '1000', '2000']);
    const [first, second] = gaps();
    // The broker never delivers before the delivery time (it may be later: its delayed-delivery tick).
    expect(first).toBeGreaterThanOrEqual(900);
    expect(second).toBeGreaterThanOrEqual(1900);
    expect(failureLines().map(({ text }) => text.match(/attempt=\S+ outcome=("[^"]+"|\S+)/)![0])).toEqual([
      'attempt=1/3 outcome="retry in 1s"',
      'attempt=2/3 outcome="retry in 2s"',
      'attempt=3/3 outcome=dead-lettered',
    ]);
  });

  it("uses a handler's own maxAttempts and fixed delay", async () => {
    await publish('urn:babel:orders:fixed');
    const { body } = await nextDeadLetter();
    expect(body.dead_letter).toMatchObject({ attempts: 3 });
    expect(deliveries.map(({ delayProperty }) => delayProperty)).toEqual([undefined, '1500', '1500']);
    for (const gap of gaps()) expect(gap).toBeGreaterThanOrEqual(1400);
  });
});

describe('non-retriable failures (real broker)', () => {
  it('dead-letters a validation failure once, at its first delivery, with every message', async () => {
    await publish('urn:babel:orders:validated', { qty: 0 });
    const { body, properties } = await nextDeadLetter();
    expect(body.attempts).toBe(1);
    expect(body.dead_letter).toMatchObject({
      reason: 'failed',
      exception: 'BadRequestException',
      error: 'sku must be a string; qty must not be less than 1',
      attempts: 1,
    });
    expect(properties['bq-dead-letter-error']).toBe('sku must be a string; qty must not be less than 1');
    await expectNothing(dlq, 2500);
    expect(service.settled.filter(({ urn }) => urn === 'urn:babel:orders:validated')).toHaveLength(1);
    expect(failureLines()).toHaveLength(1);
    expect(failureLines()[0]!.text).toContain(
      'attempt=1/3 outcome="dead-lettered (not retriable)" error="BadRequestException: sku must be a string; qty must not be less than 1"',
    );
    expect(lines.filter(({ text }) => text.startsWith('dead-lettered:'))).toHaveLength(1);
  });

  it('dead-letters a BabelNonRetriableError at once', async () => {
    await publish('urn:babel:orders:refused');
    const { body } = await nextDeadLetter();
    expect(body.dead_letter).toMatchObject({
      exception: 'BabelNonRetriableError',
      error: 'customer 9 is closed',
      attempts: 1,
    });
    await expectNothing(dlq, 2500);
    expect(deliveries).toHaveLength(1);
  });

  it('dead-letters a guard denial at once', async () => {
    await publish('urn:babel:orders:guarded');
    const { body } = await nextDeadLetter();
    expect(body.dead_letter).toMatchObject({ error: 'Forbidden resource', attempts: 1 });
    await waitFor('the failure line', () => failureLines().length === 1);
    expect(failureLines()[0]!.text).toContain('outcome="dead-lettered (not retriable)"');
    expect(deliveries).toHaveLength(0);
  });
});

// One list of settlement scenarios, run against the testing kit (test/unit/testing/parity.test.ts) and against the
// real broker on both clients (test/integration/testing/parity.test.ts): each must produce the same fingerprint.
import 'reflect-metadata';
import {
  BadRequestException,
  Controller,
  type INestMicroservice,
  type PipeTransform,
  UsePipes,
  type Type,
} from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { Test, type TestingModuleBuilder } from '@nestjs/testing';
import {
  BABEL_PULSAR_CLIENT,
  BabelContext,
  BabelHandler,
  BabelPulsarServer,
  BabelQueueModule,
  EnvelopeCodec,
  InMemoryIdempotencyStore,
  type BabelQueueModuleOptions,
  type PulsarClientLike,
} from '../../lib/index.js';
import { pulsarProperties } from '../../lib/pulsar/index.js';
import { BabelQueueTestHarness, type MessageOutcome, type ObservedMessage } from '../../lib/testing/index.js';

export const calls: Array<{ urn: string; attempts: number }> = [];

class RejectNegative implements PipeTransform {
  transform(value: unknown): unknown {
    const amount = (value as { amount?: unknown } | null)?.amount;
    if (typeof amount === 'number' && amount < 0) throw new BadRequestException('amount must not be negative');
    return value;
  }
}

@Controller()
export class ParityController {
  @BabelHandler('urn:parity:ok')
  ok(@Payload() _data: unknown, @Ctx() ctx: BabelContext): void {
    calls.push({ urn: ctx.getUrn(), attempts: ctx.getAttempts() });
  }

  @BabelHandler('urn:parity:fail')
  fail(@Payload() _data: unknown, @Ctx() ctx: BabelContext): void {
    calls.push({ urn: ctx.getUrn(), attempts: ctx.getAttempts() });
    throw new Error('payment provider down');
  }

  @BabelHandler('urn:parity:validated')
  @UsePipes(new RejectNegative())
  validated(@Payload() _data: unknown, @Ctx() ctx: BabelContext): void {
    calls.push({ urn: ctx.getUrn(), attempts: ctx.getAttempts() });
  }

  @BabelHandler('urn:parity:flaky', { retryPolicy: { backoff: 'fixed', initialDelayMs: 1500 } })
  flaky(@Payload() _data: unknown, @Ctx() ctx: BabelContext): void {
    calls.push({ urn: ctx.getUrn(), attempts: ctx.getAttempts() });
    if (ctx.getAttempts() === 0) throw new Error('not yet');
  }
}

/** What differs between runs is masked: times, the unique topic name. */
export interface Fingerprint {
  kind: MessageOutcome['kind'];
  reason?: string;
  deliveries: Array<{ action: string; attempt?: number; reason?: string; urn: string | null }>;
  retries: Array<{ properties: Record<string, string>; body: unknown }>;
  deadLetter?: { properties: Record<string, string>; body: unknown };
  calls: Array<{ urn: string; attempts: number }>;
}

function mask(value: unknown, topic: string): unknown {
  if (typeof value === 'string') return value.split(topic).join('<topic>');
  if (Array.isArray(value)) return value.map((item) => mask(item, topic));
  if (value && typeof value === 'object') {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      result[key] = ['created_at', 'failed_at', 'bq-dead-letter-failed-at'].includes(key)
        ? '<time>'
        : mask(item, topic);
    }
    return result;
  }
  return value;
}

const view = (message: ObservedMessage, topic: string) => ({
  properties: mask(message.properties, topic) as Record<string, string>,
  body: mask(message.body ?? message.data.toString('utf8'), topic),
});

export function fingerprint(outcome: MessageOutcome, topic: string): Fingerprint {
  return {
    kind: outcome.kind,
    ...(outcome.reason !== undefined && { reason: outcome.reason }),
    deliveries: outcome.deliveries.map(({ action, attempt, reason, urn }) => ({
      action,
      ...(attempt !== undefined && { attempt }),
      ...(reason !== undefined && { reason }),
      urn,
    })),
    retries: outcome.retries.map((copy) => view(copy, topic)),
    ...(outcome.deadLetter && { deadLetter: view(outcome.deadLetter, topic) }),
    calls: calls.splice(0),
  };
}

/** How a run stages one scenario: the broker (or the kit) it runs on, and how time passes there. */
export interface ParityRun {
  /** The module's serviceUrl (a kit run replaces the client it would create). */
  serviceUrl: string;
  /** Applied to the testing module before compile (the kit swaps the client in here). */
  prepare(builder: TestingModuleBuilder): TestingModuleBuilder;
  /** Lets `ms` of delivery delay pass once `ready()` holds (real time on a broker, the kit's clock in memory). */
  elapse(ms: number, ready: () => boolean): Promise<void>;
}

export interface ParityApp {
  app: INestMicroservice;
  harness: BabelQueueTestHarness;
  topic: string;
  client: PulsarClientLike;
  close(): Promise<void>;
}

const FIXED = { id: '7d1c0b52-3f7e-4c1a-9a55-2f0e8f6c9a10', traceId: 'trace-parity' };

export async function startParityApp(
  run: ParityRun,
  topic: string,
  extra: Partial<BabelQueueModuleOptions> = {},
  controllers: Type[] = [ParityController],
): Promise<ParityApp> {
  const builder = Test.createTestingModule({
    imports: [
      BabelQueueModule.forRoot({
        serviceUrl: run.serviceUrl,
        topic,
        consumer: { maxAttempts: 3, subscriptionInitialPosition: 'Earliest' },
        logger: { log: () => {}, warn: () => {}, error: () => {} },
        startupWarnings: false,
        ...extra,
      }),
    ],
    controllers,
  });
  const moduleRef = await run.prepare(builder).compile();
  const app = moduleRef.createNestMicroservice({ strategy: moduleRef.get(BabelPulsarServer), logger: false });
  await app.listen();
  const client = moduleRef.get<PulsarClientLike>(BABEL_PULSAR_CLIENT);
  const harness = await BabelQueueTestHarness.attach(moduleRef.get(BabelPulsarServer), client, { timeoutMs: 20_000 });
  return {
    app,
    harness,
    topic,
    client,
    close: async () => {
      await harness.close();
      await app.close();
    },
  };
}

export interface Scenario {
  name: string;
  options?: () => Partial<BabelQueueModuleOptions>;
  play(app: ParityApp, run: ParityRun): Promise<MessageOutcome>;
}

export const scenarios: Scenario[] = [
  {
    name: 'happy path',
    play: async ({ harness }) => (await harness.publish('urn:parity:ok', { order_id: 1 }, FIXED)).outcome(),
  },
  {
    name: 'retries to the dead-letter topic',
    play: async ({ harness }) => (await harness.publish('urn:parity:fail', { order_id: 2 }, FIXED)).outcome(),
  },
  {
    name: 'non-retriable (a pipe rejects the payload)',
    play: async ({ harness }) => (await harness.publish('urn:parity:validated', { amount: -5 }, FIXED)).outcome(),
  },
  {
    name: 'poison',
    play: async ({ harness }) =>
      (
        await harness.publishRaw('{"job": "urn:parity:ok", truncated', {
          'bq-job': 'urn:parity:ok',
          'bq-message-id': FIXED.id,
        })
      ).outcome(),
  },
  {
    name: 'gate (an unsupported schema version)',
    play: async ({ harness, topic }) => {
      const envelope = EnvelopeCodec.make('urn:parity:ok', { order_id: 5 }, { ...FIXED, queue: topic });
      const properties = { ...pulsarProperties(envelope), 'bq-schema-version': '2' };
      return (await harness.publishRaw(EnvelopeCodec.encodeToBuffer(envelope), properties)).outcome();
    },
  },
  {
    name: 'unknown URN',
    play: async ({ harness }) => (await harness.publish('urn:parity:nobody', { order_id: 6 }, FIXED)).outcome(),
  },
  {
    name: 'delayed retry',
    play: async ({ harness, topic }, run) => {
      const sent = await harness.publish('urn:parity:flaky', { order_id: 7 }, FIXED);
      await run.elapse(1500, () => harness.published(topic).length >= 2);
      return sent.outcome();
    },
  },
  {
    name: 'idempotency (the same id twice)',
    options: () => ({ idempotency: { store: new InMemoryIdempotencyStore() } }),
    play: async ({ harness }) => {
      await (await harness.publish('urn:parity:ok', { order_id: 8 }, FIXED)).outcome();
      return (await harness.publish('urn:parity:ok', { order_id: 8 }, FIXED)).outcome();
    },
  },
];

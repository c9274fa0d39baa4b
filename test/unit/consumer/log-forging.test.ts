// A message's URN, meta.id and a handler's error reach the logs: they are quoted and their control characters
// escaped, so a record cannot forge a log line or send escapes to whoever tails the log. The idempotency line
// goes through the `logger` option like every other line. Runs on the testing kit: no broker.
import 'reflect-metadata';
import { Controller, type LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  BabelHandler,
  BabelPulsarServer,
  BabelQueueModule,
  EnvelopeCodec,
  InMemoryIdempotencyStore,
} from '../../../lib/index.js';
import { failureLine } from '../../../lib/consumer/diagnostics.js';
import { BabelQueueTestHarness, InMemoryPulsar } from '../../../lib/testing/index.js';
import { pulsarProperties } from '../../../lib/pulsar/binding.js';

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/u;
const FORGED = 'x\n[Nest] 1  - 12/01/2026, 9:00:00 PM   ERROR [Auth] admin logged in\u001b[31m\u009b';

test('the failure line quotes the URN and the error, escapes their controls and stays one line', () => {
  const line = failureLine({
    urn: 'urn:babel:orders:created' + FORGED,
    messageId: '(1,2,-1,-1)',
    topic: 'orders',
    attempt: 1,
    maxAttempts: 3,
    outcome: { kind: 'nack' },
    error: new Error('bad order' + FORGED),
  });
  expect(line).not.toMatch(RAW_CONTROL);
  expect(line).not.toContain('\n');
  expect(line).toContain('urn="urn:babel:orders:createdx\\n[Nest] 1');
  expect(line).toContain('error="Error: bad orderx\\n[Nest]');
});

function capture(): { logger: LoggerService; lines: Array<[string, string]> } {
  const lines: Array<[string, string]> = [];
  const push = (level: string) => (message: unknown) => void lines.push([level, String(message)]);
  return {
    lines,
    logger: { log: push('log'), warn: push('warn'), error: push('error'), debug: push('debug'), verbose: () => {} },
  };
}

test('the idempotency "skipped" line goes to the logger option, quoted; a failure with a stack stays indented', async () => {
  const option = capture();
  const nest = capture();
  const URN = 'urn:babel:orders:created';
  @Controller()
  class Orders {
    @BabelHandler(URN, { maxAttempts: 1 })
    created(data: { fail?: boolean }): void {
      if (data.fail) throw new Error('refused' + FORGED);
    }
  }
  const pulsar = new InMemoryPulsar();
  const moduleRef = await Test.createTestingModule({
    imports: [
      BabelQueueModule.forRoot({
        client: pulsar,
        topic: 'orders',
        logger: option.logger,
        idempotency: { store: new InMemoryIdempotencyStore() },
        consumer: { logStackTraces: true },
      }),
    ],
    controllers: [Orders],
  }).compile();
  moduleRef.useLogger(nest.logger);
  const app = moduleRef.createNestMicroservice({ strategy: moduleRef.get(BabelPulsarServer), logger: nest.logger });
  await app.listen();
  // The outcome lines are what this test reads: the kit prints them instead of keeping them.
  const harness = await BabelQueueTestHarness.attach(moduleRef.get(BabelPulsarServer), pulsar, { logOutcomes: true });
  try {
    const envelope = EnvelopeCodec.make(URN, {}, { queue: 'orders', id: 'm-1' + FORGED });
    const body = EnvelopeCodec.encodeToBuffer(envelope);
    expect((await (await harness.publishRaw(body, pulsarProperties(envelope))).outcome()).kind).toBe('handled');
    await (await harness.publishRaw(body, pulsarProperties(envelope))).outcome();
    const skipped = option.lines.filter(([, line]) => line.includes('already handled'));
    expect(skipped).toEqual([
      [
        'log',
        `skipped urn="${URN}" id="m-1x\\n[Nest] 1  - 12/01/2026, 9:00:00 PM   ERROR [Auth] admin logged in\\x1b[31m\\x9b": already handled (idempotency)`,
      ],
    ]);
    expect(nest.lines.filter(([, line]) => line.includes('already handled'))).toEqual([]);

    const failing = EnvelopeCodec.make(URN, { fail: true }, { queue: 'orders', id: 'm-2' });
    await (await harness.publishRaw(EnvelopeCodec.encodeToBuffer(failing), pulsarProperties(failing))).outcome();
    const failure = option.lines.find(([, line]) => line.startsWith('message failed:'));
    expect(failure).toBeDefined();
    const [first, ...rest] = failure![1].split('\n');
    expect(first).toContain('error="Error: refusedx\\n[Nest]');
    expect(failure![1]).not.toMatch(RAW_CONTROL);
    // The stack repeats the message: every line after the first is indented, none passes for a log line.
    expect(rest.length).toBeGreaterThan(0);
    for (const line of rest) expect(line).toMatch(/^\s/);
  } finally {
    await harness.close();
    await app.close();
  }
});

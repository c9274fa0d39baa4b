// What a failing message prints with Nest's default logger (ConsoleLogger, every level on): one line per failed
// delivery and one for its dead letter, the hooks' own lines after the line they follow, and nothing at all in a
// kit test that asserts the outcome (unless logOutcomes asks for the lines). Runs on the testing kit: no broker.
import 'reflect-metadata';
import { ConsoleLogger, Controller, Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { BabelHandler, BabelPulsarServer, BabelQueueModule } from '../../../lib/index.js';
import { BabelQueueTestHarness, InMemoryPulsar } from '../../../lib/testing/index.js';

@Controller()
class FailingController {
  @BabelHandler('urn:babel:orders:created')
  created(): void {
    throw new Error('warehouse unavailable');
  }
}

/** Every line Nest's loggers write to stdout and stderr while `run` runs, colours removed. */
async function printedDuring<T>(run: () => Promise<T>): Promise<{ result: T; printed: string[] }> {
  const printed: string[] = [];
  const original = { out: process.stdout.write, err: process.stderr.write };
  const keep = (chunk: unknown): boolean => {
    // eslint-disable-next-line no-control-regex
    const text = String(chunk).replace(/\x1b\[[0-9;]*m/g, '');
    printed.push(...text.split('\n').filter((line) => line.trim() !== ''));
    return true;
  };
  process.stdout.write = keep as typeof process.stdout.write;
  process.stderr.write = keep as typeof process.stderr.write;
  try {
    return { result: await run(), printed };
  } finally {
    process.stdout.write = original.out;
    process.stderr.write = original.err;
  }
}

async function boot(hooksLog: boolean) {
  const hookLogger = new Logger('Hooks');
  const moduleRef = await Test.createTestingModule({
    imports: [
      BabelQueueModule.forRoot({
        client: new InMemoryPulsar(),
        topic: 'orders',
        consumer: { maxAttempts: 3 },
        ...(hooksLog && {
          hooks: {
            onError: (error: Error) => hookLogger.log(`onError: ${error.message}`),
            onDeadLetter: (record: { topic: string }) => hookLogger.log(`onDeadLetter: ${record.topic}`),
          },
        }),
      }),
    ],
    controllers: [FailingController],
  })
    .setLogger(new ConsoleLogger())
    .compile();
  const app = moduleRef.createNestMicroservice({ strategy: moduleRef.get(BabelPulsarServer) });
  await app.listen();
  return { moduleRef, app };
}

describe("a failing message's log lines with Nest's default logger", () => {
  it('are at most 4 for a message failing 3 times: a line per attempt, then the dead letter', async () => {
    const { moduleRef, app } = await boot(false);
    const server = moduleRef.get(BabelPulsarServer);
    const harness = await BabelQueueTestHarness.attach(server, server.unwrap(), { logOutcomes: true });
    try {
      const { result: outcome, printed } = await printedDuring(async () => {
        const sent = await harness.publish('urn:babel:orders:created', { order_id: 8 });
        return sent.outcome();
      });
      expect(outcome.kind).toBe('dead-lettered');
      expect(printed.length).toBeLessThanOrEqual(4);
      expect(printed).toEqual([
        expect.stringMatching(/WARN .*message failed: .* attempt=1\/3 outcome="retry now" error="Error: warehouse/),
        expect.stringMatching(/WARN .*message failed: .* attempt=2\/3 outcome="retry now"/),
        expect.stringMatching(/ERROR .*message failed: .* attempt=3\/3 outcome=dead-lettered/),
        expect.stringMatching(/WARN .*dead-lettered: .* to=persistent:\/\/public\/default\/orders\.dlq reason=failed/),
      ]);
      // What the harness would otherwise have kept for the test.
      expect(outcome.log).toEqual([]);
    } finally {
      await harness.close();
      await app.close();
    }
  });

  it("prints each hook's line after the line it follows", async () => {
    const { moduleRef, app } = await boot(true);
    const server = moduleRef.get(BabelPulsarServer);
    const harness = await BabelQueueTestHarness.attach(server, server.unwrap(), { logOutcomes: true });
    try {
      const { printed } = await printedDuring(async () =>
        (await harness.publish('urn:babel:orders:created', { order_id: 8 })).outcome(),
      );
      const kinds = printed.map((line) =>
        line.includes('message failed:')
          ? 'failure'
          : line.includes('dead-lettered:')
            ? 'dead letter'
            : line.includes('onError:')
              ? 'onError'
              : line.includes('onDeadLetter:')
                ? 'onDeadLetter'
                : line,
      );
      expect(kinds).toEqual([
        'failure',
        'onError',
        'failure',
        'onError',
        'failure',
        'onError',
        'dead letter',
        'onDeadLetter',
      ]);
    } finally {
      await harness.close();
      await app.close();
    }
  });

  it('are kept out of a kit test by default, in the outcome instead', async () => {
    const { moduleRef, app } = await boot(false);
    const server = moduleRef.get(BabelPulsarServer);
    const harness = await BabelQueueTestHarness.attach(server, server.unwrap());
    try {
      const { result: outcome, printed } = await printedDuring(async () =>
        (await harness.publish('urn:babel:orders:created', { order_id: 8 })).outcome(),
      );
      expect(outcome.kind).toBe('dead-lettered');
      expect(printed).toEqual([]);
      expect(outcome.log).toEqual([
        expect.stringContaining('attempt=1/3 outcome="retry now"'),
        expect.stringContaining('attempt=2/3 outcome="retry now"'),
        expect.stringContaining('attempt=3/3 outcome=dead-lettered'),
        expect.stringMatching(/^dead-lettered: /),
      ]);
    } finally {
      await harness.close();
      await app.close();
    }
  });
});

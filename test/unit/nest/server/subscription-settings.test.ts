// A handler's own circuit breaker and rate limit: given by @BabelHandler or its `handlers` entry, they apply to its
// subscription only, and two handlers of one subscription that disagree are refused (testing kit).
import 'reflect-metadata';
import { Controller } from '@nestjs/common';
import { BabelHandler } from '../../../../lib/nest/index.js';
import { InMemoryPulsar } from '../../../../lib/testing/index.js';
import { startService } from '../../../support/nest-app.js';
import { publishTo } from '../../../support/batch-scenario.js';
import { recordingLogger, until } from '../../../support/recording.js';

const breaker = { failureRatio: 0.5, windowMs: 60_000, minimumMessages: 3, openMs: 60_000, probes: 1 };

@Controller()
class Payments {
  @BabelHandler('urn:ss:payments:charge', { topic: 'payments', circuitBreaker: breaker, maxPerSecond: 200 })
  charge() {
    throw new Error('the payment service is down');
  }

  @BabelHandler('urn:ss:orders:created')
  created() {
    throw new Error('the order service is down');
  }
}

@Controller()
class Shared {
  @BabelHandler('urn:ss:a', { circuitBreaker: true })
  a() {}

  @BabelHandler('urn:ss:b', { circuitBreaker: { openMs: 1000 } })
  b() {}
}

const starts: number[] = [];

@Controller()
class Paced {
  @BabelHandler('urn:ss:paced', { topic: 'paced', maxPerSecond: 10 })
  paced() {
    starts.push(Date.now());
  }
}

describe("a handler's circuitBreaker and maxPerSecond (testing kit)", () => {
  it("spaces its subscription's handler calls 1000 / maxPerSecond ms apart", async () => {
    const pulsar = new InMemoryPulsar();
    const service = await startService([Paced], { client: pulsar, topics: 'home', concurrency: 4 });
    try {
      await publishTo(
        pulsar,
        'paced',
        Array.from({ length: 6 }, (_, n) => ['urn:ss:paced', { n }] as [string, { n: number }]),
      );
      await until(() => starts.length === 6);
      // Five gaps of at least 100 ms (a slower machine only widens them).
      expect(starts.at(-1)! - starts[0]!).toBeGreaterThanOrEqual(450);
    } finally {
      await service.close();
    }
  });

  it('trips the breaker of its own subscription only', async () => {
    const pulsar = new InMemoryPulsar();
    const service = await startService([Payments], { client: pulsar, topics: 'home', maxAttempts: 5 });
    try {
      const state = (topic: string) => service.server.describe().find((entry) => entry.topic.endsWith(topic));
      await publishTo(
        pulsar,
        'payments',
        [1, 2, 3, 4, 5].map((n) => ['urn:ss:payments:charge', { n }] as [string, { n: number }]),
      );
      await publishTo(
        pulsar,
        'home',
        [1, 2, 3, 4, 5].map((n) => ['urn:ss:orders:created', { n }] as [string, { n: number }]),
      );
      await until(() => state('payments')?.tripped === true);
      await until(() => service.settled.filter((event) => event.topic.endsWith('home')).length >= 5);
      expect(state('home')?.tripped).toBe(false);
      // The tripped subscription holds its messages: none of them is dead-lettered (those of home, without a
      // breaker, are).
      const deadLettered = service.settled.filter((event) => event.action === 'dead-letter');
      expect(deadLettered.filter((event) => event.topic.endsWith('payments'))).toEqual([]);
      expect(deadLettered.filter((event) => event.topic.endsWith('home'))).toHaveLength(5);
    } finally {
      await service.close();
    }
  });

  it('the handlers entry gives them too, and the start-up line names them where they are given', async () => {
    const pulsar = new InMemoryPulsar();
    const { lines, logger } = recordingLogger();
    const service = await startService([Payments], {
      client: pulsar,
      topics: 'home',
      logger,
      handlers: { 'urn:ss:orders:created': { maxPerSecond: 50, circuitBreaker: { minimumMessages: 2 } } },
    });
    try {
      const line = lines.find((text) => text.includes('handler settings of Payments.created'));
      expect(line).toContain('maxPerSecond 50 from handlers["urn:ss:orders:created"]');
      expect(line).toContain('circuitBreaker {"failureRatio":0.5');
      const other = lines.find((text) => text.includes('handler settings of Payments.charge'));
      expect(other).toContain('maxPerSecond 200 from @BabelHandler');
    } finally {
      await service.close();
    }
  });

  it('refuses two handlers of one subscription that give different breakers, naming both', async () => {
    await expect(startService([Shared], { client: new InMemoryPulsar(), topics: 'home' })).rejects.toThrow(
      /Shared\.a and Shared\.b share the consumer of topic home \(subscription babelqueue\) but their handler settings give different circuitBreaker/,
    );
  });

  it('refuses a rate that is not a positive number, on the decorator and in handlers', async () => {
    expect(() => BabelHandler('urn:ss:x', { maxPerSecond: 0 })).toThrow(
      /@BabelHandler maxPerSecond must be a positive number, got the number 0/,
    );
    await expect(
      startService([Payments], {
        client: new InMemoryPulsar(),
        topics: 'home',
        handlers: { 'urn:ss:orders:created': { maxPerSecond: -1 } },
      }),
    ).rejects.toThrow(/handlers\["urn:ss:orders:created"\]\.maxPerSecond must be a positive number/);
  });
});

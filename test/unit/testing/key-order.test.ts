// ordering 'key' in a module-built app under the testing kit: many keys at concurrency 16, a tenth of the messages
// failing once, and not one message of a key handled out of its order (a sequence number per key, checked).
import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler, BabelPulsarClient, BabelPulsarServer, BabelQueueModule } from '../../../lib/index.js';
import { quietLogger, startUnderKit } from '../../support/nest-app.js';

const ORDERED = 'urn:babel:accounts:posted';
const BY_HANDLER = 'urn:babel:accounts:closed';
const KEYS = 50;
const PER_KEY = 20;

interface Posting {
  key: string;
  seq: number;
}

const book = {
  next: new Map<string, number>(),
  running: new Set<string>(),
  failedOnce: new Set<string>(),
  violations: 0,
  handled: 0,
  attempts: 0,
  reset() {
    this.next.clear();
    this.running.clear();
    this.failedOnce.clear();
    this.violations = 0;
    this.handled = 0;
    this.attempts = 0;
  },
};

/** The handler's check: a key's messages arrive one at a time, each the one after the last handled. */
async function post({ key, seq }: Posting): Promise<void> {
  book.attempts += 1;
  if (book.running.has(key) || (book.next.get(key) ?? 0) !== seq) book.violations += 1;
  book.running.add(key);
  try {
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
    const id = `${key}/${seq}`;
    if (seq % 10 === 3 && !book.failedOnce.has(id)) {
      book.failedOnce.add(id);
      throw new Error(`${id} fails once`);
    }
    book.next.set(key, seq + 1);
    book.handled += 1;
  } finally {
    book.running.delete(key);
  }
}

@Controller()
class Accounts {
  @BabelHandler(ORDERED)
  posted(@Payload() posting: Posting) {
    return post(posting);
  }
}

@Module({
  imports: [
    BabelQueueModule.forRoot({
      serviceUrl: 'pulsar://nowhere:6650',
      topic: 'accounts',
      logger: quietLogger,
      consumer: { ordering: 'key', concurrency: 16, maxAttempts: 3 },
    }),
  ],
  controllers: [Accounts],
})
class OrderedApp {}

@Controller()
class Closings {
  @BabelHandler(BY_HANDLER, { ordering: 'key', retryPolicy: { backoff: 'fixed', initialDelayMs: 20 } })
  closed(@Payload() posting: Posting) {
    return post(posting);
  }
}

@Module({
  imports: [
    BabelQueueModule.forRoot({
      serviceUrl: 'pulsar://nowhere:6650',
      topic: 'closings',
      logger: quietLogger,
      // Failover: Pulsar ignores delivery times there, but a retry in place waits in the process.
      consumer: { concurrency: 8, subscriptionType: 'Failover' },
    }),
  ],
  controllers: [Closings],
})
class HandlerOrderedApp {}

async function until(done: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out (${book.handled} handled)`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

beforeEach(() => book.reset());

it("keeps each key's order at concurrency 16 with a tenth failing once: 0 violations, nothing re-published", async () => {
  const { pulsar, app } = await startUnderKit(OrderedApp);
  try {
    const babel = app.get(BabelPulsarClient);
    for (let seq = 0; seq < PER_KEY; seq++)
      for (let k = 0; k < KEYS; k++) await babel.publish(ORDERED, { key: `acct-${k}`, seq }, { key: `acct-${k}` });
    await until(() => book.handled === KEYS * PER_KEY && pulsar.backlog('accounts') === 0);
    expect(book.violations).toBe(0);
    expect(book.attempts).toBe(KEYS * PER_KEY + KEYS * (PER_KEY / 10));
    // Retried in place: no copy went back to the topic, nothing was dead-lettered.
    expect(pulsar.published('accounts')).toHaveLength(KEYS * PER_KEY);
    expect(pulsar.published('accounts.dlq')).toHaveLength(0);
    expect(pulsar.backlog('accounts')).toBe(0);
    expect(app.get(BabelPulsarServer).describe()).toEqual([
      expect.objectContaining({ subscription: 'babelqueue', waitingInLanes: 0, active: 0 }),
    ]);
  } finally {
    await app.close();
  }
});

it("@BabelHandler ordering 'key' retries in place after its delay, on a Failover subscription too", async () => {
  const { app } = await startUnderKit(HandlerOrderedApp);
  try {
    const babel = app.get(BabelPulsarClient);
    for (let seq = 0; seq < 5; seq++)
      for (let k = 0; k < 4; k++) await babel.publish(BY_HANDLER, { key: `k${k}`, seq }, { key: `k${k}` });
    await until(() => book.handled === 20);
    expect(book.violations).toBe(0);
    expect(book.failedOnce.size).toBe(4);
  } finally {
    await app.close();
  }
});

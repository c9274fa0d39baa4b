// Replaying a subscription from a point in time or a message id, through the real broker, while a server of the
// client under test consumes it: a ledger counts each message's deliveries, so a replay must re-deliver exactly
// the messages of its window, once each, and a dry run none.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { BabelContext, BabelHandler, EnvelopeCodec, type PulsarClientLike } from '../../../lib/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { messageIdText } from '../../../lib/pulsar/message-id.js';
import { runCli } from '../../../lib/cli/run-cli.js';
import { BabelQueueReplay } from '../../../lib/replay/index.js';
import { backlog, newClient, serviceUrl, sleep, uniqueTopic, waitFor, webUrl } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(120_000);

const URN = 'urn:babel:replay:order';
const SUBSCRIPTION = 'replayed';
/** Deliveries per message number. */
const ledger = new Map<number, number>();
const messageIds = new Map<number, string>();

@Controller()
class Orders {
  @BabelHandler(URN, { subscription: SUBSCRIPTION })
  handle(@Payload() data: { n: number }, @Ctx() ctx: BabelContext) {
    ledger.set(data.n, (ledger.get(data.n) ?? 0) + 1);
    if (!messageIds.has(data.n)) messageIds.set(data.n, messageIdText(ctx.getMessage().getMessageId()));
  }
}

let client: PulsarClientLike;
let service: RunningService | null = null;
beforeAll(() => {
  client = newClient();
});
afterEach(async () => {
  await service?.close();
  service = null;
});
afterAll(async () => {
  await client.close();
});

const deliveries = () => [...ledger.values()].reduce((sum, count) => sum + count, 0);

/** One at a time, so that each message is its own entry (a reset goes to a whole entry). */
async function publish(topic: string, from: number, to: number): Promise<void> {
  const producer = await client.createProducer({ topic });
  try {
    for (let n = from; n < to; n++) {
      const envelope = EnvelopeCodec.make(URN, { n }, { queue: topic });
      await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
    }
  } finally {
    await producer.close();
  }
}

/** Waits for `total` deliveries and an empty backlog, then makes sure nothing more comes. */
async function settledAt(topic: string, total: number): Promise<void> {
  await waitFor(`${total} deliveries`, () => deliveries() >= total);
  await waitFor('an empty backlog', async () => (await backlog(topic, SUBSCRIPTION)) === 0);
  await sleep(500);
  expect(deliveries()).toBe(total);
}

async function cli(...args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(
    ['replay', ...args],
    { out: (l) => out.push(l), err: (l) => err.push(l) },
    {
      BABELQUEUE_PULSAR_SERVICE_URL: serviceUrl(),
    },
  );
  return { code, out, err };
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const counts = (numbers: number[]) => numbers.map((n) => ledger.get(n) ?? 0);

describe('babelqueue-pulsar replay / BabelQueueReplay', () => {
  it('re-delivers exactly the messages published since a time, once each; a dry run only counts them', async () => {
    ledger.clear();
    messageIds.clear();
    const topic = uniqueTopic('replay');
    service = await startService([Orders], { client: newClient(), topics: topic });
    await publish(topic, 0, 30);
    await settledAt(topic, 30);
    // The window starts strictly after the last message before it and before the first in it.
    await sleep(50);
    const since = new Date();
    await sleep(50);
    await publish(topic, 30, 60);
    await settledAt(topic, 60);

    const dry = await cli('--topic', topic, '--subscription', SUBSCRIPTION, '--since', since.toISOString());
    expect(dry).toEqual({
      code: 0,
      out: [
        `dry run, nothing moved: subscription ${SUBSCRIPTION} of persistent://public/default/${topic} since ` +
          `${since.toISOString()} would re-deliver 30 message(s); add --yes to replay`,
      ],
      err: [],
    });
    await sleep(500);
    expect(deliveries()).toBe(60);

    const live = await cli('--topic', topic, '--subscription', SUBSCRIPTION, '--since', since.toISOString(), '--yes');
    expect(live.code).toBe(0);
    expect(live.out.join('\n')).toMatch(/^done: .* re-delivers 30 message\(s\)/);
    await settledAt(topic, 90);
    expect(counts(range(0, 30))).toEqual(range(0, 30).map(() => 1));
    expect(counts(range(30, 60))).toEqual(range(30, 60).map(() => 2));

    // From a message id (the service method): that message and every one after it.
    const replay = new BabelQueueReplay({ adminUrl: webUrl() });
    const fromId = await replay.run({ topic, subscription: SUBSCRIPTION, messageId: messageIds.get(45)!, yes: true });
    expect(fromId).toMatchObject({ dryRun: false, messages: 15, unacknowledged: 0 });
    await settledAt(topic, 105);
    expect(counts(range(40, 50))).toEqual([2, 2, 2, 2, 2, 3, 3, 3, 3, 3]);
  });

  it('refuses while the subscription has unacknowledged messages from before the point, and names what is missing', async () => {
    const topic = uniqueTopic('replay-refused');
    service = await startService([Orders], { client: newClient(), topics: topic });
    await service.server.pause();
    await publish(topic, 0, 5);
    const since = Date.now();
    await sleep(50);
    const refused = await cli(
      '--topic',
      topic,
      '--subscription',
      SUBSCRIPTION,
      '--since',
      new Date(since).toISOString(),
    );
    expect(refused.code).toBe(1);
    expect(refused.err.join('\n')).toMatch(
      /has 5 unacknowledged message\(s\) published before since .*: a replay would skip them/,
    );
    service.server.resume();

    expect((await cli('--topic', `${topic}-none`, '--subscription', SUBSCRIPTION, '--since', '5m')).code).toBe(4);
    const noSubscription = await cli('--topic', topic, '--subscription', 'nobody', '--since', '5m');
    expect(noSubscription.code).toBe(4);
    expect(noSubscription.err.join('\n')).toMatch(/has no subscription nobody .*it has: .*replayed/);
    expect((await cli('--topic', topic, '--subscription', SUBSCRIPTION)).code).toBe(2);
  });
});

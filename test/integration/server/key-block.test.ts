// onExhausted 'block-key' through the real broker, on the client under test: a module-built app on a Key_Shared
// subscription keeps a message out of attempts unacknowledged and its key waiting while other keys go on, until
// server.unblock() dead-letters it and the key's next message runs.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler, EnvelopeCodec, type PulsarClientLike } from '../../../lib/index.js';
import { pulsarProperties, type PulsarConsumer, type PulsarProducer } from '../../../lib/pulsar/index.js';
import { backlog, newClient, receiveN, uniqueTopic, waitFor } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(60_000);

const POSTED = 'urn:babel:ledger:posted';
const handled: string[] = [];

@Controller()
class Ledger {
  @BabelHandler(POSTED)
  posted(@Payload() { key, seq }: { key: string; seq: number }) {
    if (key === 'stuck' && seq === 0) throw new Error('never works');
    handled.push(`${key}/${seq}`);
  }
}

let client: PulsarClientLike;
let service: RunningService;
let topic: string;
let producer: PulsarProducer;
let dlq: PulsarConsumer;

beforeAll(async () => {
  client = newClient();
  topic = uniqueTopic('key-block');
  dlq = await client.subscribe({ topic: `${topic}.dlq`, subscription: 'check', subscriptionType: 'Shared' });
  service = await startService([Ledger], {
    client,
    topics: topic,
    subscriptionType: 'KeyShared',
    ordering: 'key',
    onExhausted: 'block-key',
    concurrency: 4,
    maxAttempts: 2,
    retryPolicy: { backoff: 'fixed', initialDelayMs: 50 },
  });
  producer = await client.createProducer({ topic });
});
afterAll(async () => {
  await producer.close();
  await service.close();
  await dlq.close();
  await client.close();
});

async function publish(key: string, seq: number): Promise<void> {
  const envelope = EnvelopeCodec.make(POSTED, { key, seq }, { queue: topic });
  await producer.send({
    data: EnvelopeCodec.encodeToBuffer(envelope),
    properties: pulsarProperties(envelope),
    partitionKey: key,
  });
}

describe("onExhausted 'block-key' (real broker)", () => {
  it('blocks the key of a message out of attempts until unblock(), which dead-letters it; other keys go on', async () => {
    await publish('stuck', 0);
    await publish('stuck', 1);
    for (let seq = 0; seq < 5; seq++) await publish('other', seq);
    await waitFor('the other key handled', () => handled.filter((id) => id.startsWith('other/')).length === 5);
    await waitFor('the key blocked', () => service.server.describe()[0]?.blockedKeys?.length === 1);
    const [state] = service.server.describe();
    expect(state!.blockedKeys).toEqual(['stuck']);
    expect(state!.waitingInLanes).toBe(2);
    expect(handled).not.toContain('stuck/1');
    // The other key's acknowledgements reach the broker's stats a moment later (asynchronously on WebSocket).
    await waitFor('only the blocked key unacknowledged', async () => (await backlog(topic)) === 2);
    expect(service.settled.filter((event) => event.action === 'block')).toHaveLength(1);

    await expect(service.server.unblock('nobody')).rejects.toThrow(/key "nobody" is not blocked; blocked: "stuck"/);
    const events = await service.server.unblock('stuck', { topic });
    expect(events).toMatchObject([{ action: 'dead-letter', written: true }]);
    const [record] = await receiveN(dlq, 1, 20_000);
    expect(JSON.parse(record!.getData().toString()).dead_letter).toMatchObject({ reason: 'failed', attempts: 2 });
    await waitFor('the key goes on', () => handled.includes('stuck/1'));
    await waitFor('the backlog drained', async () => (await backlog(topic)) === 0);
    expect(service.server.describe()[0]!.blockedKeys).toEqual([]);
  });
});

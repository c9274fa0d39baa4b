// The native consumer adapter's intake settings: a pushed subscription takes a backlog in batches of up to 32 (never
// more than half its receiver queue) when the taker says how much room it has; not with a receiver queue too small
// to batch, not without room, and never with the addon's listener except for a zero receiver queue.
import { checkClientOptions } from '../../../../lib/pulsar/client-options.js';
import { toLibraryClient } from '../../../../lib/pulsar/library-client.js';
import type { PulsarClientLike, PulsarConsumerConfig } from '../../../../lib/pulsar/client-types.js';
import type { PushRoom } from '../../../../lib/pulsar/push-room.js';

function standInNativeClient() {
  const subscribed: Array<Record<string, unknown>> = [];
  const never = () => new Promise<never>(() => {});
  const client = {
    createReader: () => undefined,
    getPartitionsForTopic: () => undefined,
    createProducer: () => Promise.reject(new Error('not used')),
    close: () => Promise.resolve(),
    subscribe: (config: Record<string, unknown>) => {
      subscribed.push(config);
      return Promise.resolve({
        receive: never,
        batchReceive: never,
        acknowledge: () => Promise.resolve(null),
        negativeAcknowledge: () => {},
        close: () => Promise.resolve(null),
        unsubscribe: () => Promise.resolve(null),
        isConnected: () => true,
      });
    },
  };
  const adapter = toLibraryClient(client as unknown as PulsarClientLike) as PulsarClientLike & {
    subscribePush(
      config: PulsarConsumerConfig,
      listener: () => undefined,
      room?: PushRoom,
    ): Promise<{ close(): Promise<unknown> }>;
  };
  return { adapter, subscribed };
}

const base = { topic: 'orders', subscription: 'orders' };

async function policyFor(config: Partial<PulsarConsumerConfig>, withRoom = true) {
  const { adapter, subscribed } = standInNativeClient();
  const consumer = await adapter.subscribePush(
    { ...base, ...config },
    () => undefined,
    withRoom ? { room: () => 100, roomFor: () => Promise.resolve() } : undefined,
  );
  await consumer.close();
  return { policy: subscribed[0]!.batchReceivePolicy, listener: subscribed[0]!.listener };
}

describe('the native consumer adapter', () => {
  it('batches a backlog by up to 32, never more than half the receiver queue, waiting at most 2 ms', async () => {
    expect((await policyFor({})).policy).toEqual({ maxNumMessages: 32, maxNumBytes: -1, timeoutMs: 2 });
    expect((await policyFor({ receiverQueueSize: 1000 })).policy).toMatchObject({ maxNumMessages: 32 });
    expect((await policyFor({ receiverQueueSize: 16 })).policy).toMatchObject({ maxNumMessages: 8 });
    expect((await policyFor({ receiverQueueSize: 10 })).policy).toMatchObject({ maxNumMessages: 5 });
  });

  it('takes one message at a time with a queue too small to batch, or no room to go by', async () => {
    expect((await policyFor({ receiverQueueSize: 3 })).policy).toBeUndefined();
    expect((await policyFor({ receiverQueueSize: 1 })).policy).toBeUndefined();
    expect((await policyFor({}, false)).policy).toBeUndefined();
  });

  it('keeps the addon listener for a zero receiver queue only', async () => {
    expect((await policyFor({ receiverQueueSize: 0 })).listener).toBeInstanceOf(Function);
    expect((await policyFor({ receiverQueueSize: 0 })).policy).toBeUndefined();
    expect((await policyFor({})).listener).toBeUndefined();
  });

  it('leaves the batch receive policy to the intake: the consumer options refuse one', () => {
    expect(() =>
      checkClientOptions('consumer', { batchReceivePolicy: { maxNumMessages: 5 } }, 'consumerOptions', 'native'),
    ).toThrow(/batchReceivePolicy/);
  });
});

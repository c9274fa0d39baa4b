// One client path: every client the library can be handed comes out of toLibraryClient as a LibraryClient whose
// intake is its own. A wrapper must pass the capability on: the module's LazyPulsarClient over the native client
// reaches the native adapter's receive pump (batches, no receive with a time-out), never a generic loop.
import { LazyPulsarClient } from '../../../lib/pulsar/lazy-client.js';
import { isLibraryClient, ReceivingClient, toLibraryClient } from '../../../lib/pulsar/library-client.js';
import { NativeClientAdapter } from '../../../lib/pulsar/native/adapter.js';
import { PulsarWebSocketClient } from '../../../lib/pulsar/websocket/index.js';
import type { LibraryClient, PulsarClientLike, PulsarMessage } from '../../../lib/pulsar/client-types.js';
import { InMemoryPulsar } from '../../../lib/testing/index.js';
import { QueueConsumer } from '../../support/fakes.js';
import { envelopeOf, FakeMessage, wire } from '../../support/messages.js';

/** What a stand-in native consumer was asked: receive() with its arguments, and batchReceive(). */
interface Asked {
  receives: unknown[][];
  batchReceives: number;
  subscribed: Array<Record<string, unknown>>;
}

/** A stand-in for the addon's Client (it has the native-only methods), whose consumers never answer. */
function standInNativeClient(asked: Asked) {
  const never = () => new Promise<never>(() => {});
  return {
    createReader: () => undefined,
    getPartitionsForTopic: () => undefined,
    createProducer: () => Promise.reject(new Error('not used')),
    close: () => Promise.resolve(null),
    subscribe: (config: Record<string, unknown>) => {
      asked.subscribed.push(config);
      return Promise.resolve({
        receive: (...args: unknown[]) => {
          asked.receives.push(args);
          return never();
        },
        batchReceive: () => {
          asked.batchReceives += 1;
          return never();
        },
        acknowledge: () => Promise.resolve(null),
        negativeAcknowledge: () => {},
        close: () => Promise.resolve(null),
        unsubscribe: () => Promise.resolve(null),
        isConnected: () => true,
      });
    },
  };
}

const room = { room: () => 100, roomFor: () => Promise.resolve() };
const config = { topic: 'orders', subscription: 'orders', receiverQueueSize: 1000 };
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('toLibraryClient', () => {
  it('adapts a raw native client, and keeps every library client as it is', () => {
    const asked: Asked = { receives: [], batchReceives: 0, subscribed: [] };
    const native = toLibraryClient(standInNativeClient(asked) as unknown as PulsarClientLike);
    expect(native).toBeInstanceOf(NativeClientAdapter);
    expect(toLibraryClient(native)).toBe(native);
    const webSocket = new PulsarWebSocketClient({ serviceUrl: 'http://127.0.0.1:1' });
    expect(toLibraryClient(webSocket)).toBe(webSocket);
    const lazy = new LazyPulsarClient({ serviceUrl: 'http://127.0.0.1:1' });
    expect(toLibraryClient(lazy)).toBe(lazy);
    for (const client of [native, webSocket, lazy]) expect(isLibraryClient(client)).toBe(true);
  });

  it('gives any other client (the in-memory broker, a client of its own) a receive loop without a time-out', async () => {
    const pulsar = new InMemoryPulsar();
    const client = toLibraryClient(pulsar);
    expect(client).toBeInstanceOf(ReceivingClient);

    const consumer = new QueueConsumer();
    const custom: PulsarClientLike = {
      createProducer: () => Promise.reject(new Error('not used')),
      subscribe: () => Promise.resolve(consumer),
      close: () => Promise.resolve(),
    };
    const seen: PulsarMessage[] = [];
    const subscribed = await toLibraryClient(custom).subscribePush(config, (message) => {
      seen.push(message);
      return undefined;
    });
    const w = wire(envelopeOf());
    consumer.push(new FakeMessage(w.payload, w.properties), new FakeMessage(w.payload, w.properties));
    await turn();
    expect(seen).toHaveLength(2);
    await subscribed.close();
    expect(consumer.closed).toBe(true);
    expect(consumer.timedReceives).toBe(0);
  });
});

describe('the module-made LazyPulsarClient over the native client', () => {
  it("passes the native intake on: the adapter's pump takes batches and never receives with a time-out", async () => {
    const asked: Asked = { receives: [], batchReceives: 0, subscribed: [] };
    const native = standInNativeClient(asked);
    class Client {
      constructor() {
        return native;
      }
    }
    const lazy: LibraryClient = new LazyPulsarClient(
      { serviceUrl: 'pulsar://127.0.0.1:1' },
      { loadNative: () => Promise.resolve({ Client, AuthenticationToken: class {} }) },
    );
    const consumer = await lazy.subscribePush(config, () => undefined, room);
    await turn();
    // The batch receive policy the adapter sets, and the pump's first take: a batch, as room allows.
    expect(asked.subscribed[0]!.batchReceivePolicy).toMatchObject({ maxNumMessages: 32 });
    expect(asked.batchReceives).toBe(1);
    expect(asked.receives.filter((args) => args.length > 0 && args[0] !== undefined)).toEqual([]);
    await consumer.close();
    await lazy.close();
  });
});

import {
  BABEL_QUEUE_CLIENT_HANDLE,
  BABEL_QUEUE_KIT_SCHEDULES,
  type ClientHandle,
} from '../nest/module/module-tokens.js';
import { InMemoryPulsar } from './in-memory-pulsar.js';
import type { PulsarClientLike } from '../pulsar/client-types.js';

/** The part of Nest's TestingModuleBuilder this helper uses (so the library needs no @nestjs/testing). */
export interface OverridableBuilder<B> {
  overrideProvider(token: unknown): { useValue(value: unknown): B };
}

/**
 * Makes every BabelQueueModule registration of the app under test use `client` (an InMemoryPulsar, or any client)
 * instead of the one its options would create: no broker is contacted, and the module's options (topics, retries,
 * dead letters, hooks) stay as the app declares them.
 *
 *     const pulsar = new InMemoryPulsar();
 *     const moduleRef = await useInMemoryPulsar(Test.createTestingModule({ imports: [AppModule] }), pulsar).compile();
 *
 * With an InMemoryPulsar, `BabelPulsarClient.schedule()` and its kin work without a database: schedules are kept
 * in memory and fired by `pulsar.advance(ms)` (docs/scheduling.md#in-the-testing-kit).
 */
export function useInMemoryPulsar<B extends OverridableBuilder<B>>(builder: B, client: PulsarClientLike): B {
  const handle: ClientHandle = { client, kind: 'provided', owned: false, closed: false };
  const withClient = builder.overrideProvider(BABEL_QUEUE_CLIENT_HANDLE).useValue(handle);
  // With an InMemoryPulsar, the client's schedules are the kit's: fired by pulsar.advance(ms), no database needed.
  return client instanceof InMemoryPulsar
    ? withClient.overrideProvider(BABEL_QUEUE_KIT_SCHEDULES).useValue(client.schedules)
    : withClient;
}

import { BABEL_QUEUE_CLIENT_HANDLE, type ClientHandle } from '../nest/module/module-tokens.js';
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
 */
export function useInMemoryPulsar<B extends OverridableBuilder<B>>(builder: B, client: PulsarClientLike): B {
  const handle: ClientHandle = { client, kind: 'provided', owned: false, closed: false };
  return builder.overrideProvider(BABEL_QUEUE_CLIENT_HANDLE).useValue(handle);
}

import { BabelQueueOptionsError, InMemoryIdempotencyStore } from '../../../lib/index.js';
import { resolveModuleOptions } from '../../../lib/nest/module/module-options.js';

test('the module passes idempotency to its server and refuses a store without seen/remember/forget', () => {
  const store = new InMemoryIdempotencyStore();
  const resolved = resolveModuleOptions({
    serviceUrl: 'http://localhost:8080',
    topic: 'orders',
    idempotency: { store },
  });
  expect(resolved.server.idempotency?.store).toBe(store);
  expect(() =>
    resolveModuleOptions({
      serviceUrl: 'http://localhost:8080',
      topic: 'orders',
      idempotency: { store: {} as InMemoryIdempotencyStore },
    }),
  ).toThrow(BabelQueueOptionsError);
});

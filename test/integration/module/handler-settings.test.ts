// One app configured for two environments from a ConfigService only, on the broker with the client under test (the
// same scenario runs on the kit in test/unit/nest/server/handler-settings.test.ts).
import { jest } from '@jest/globals';
import { newClient, uniqueTopic } from '../../support/broker.js';
import { expectConfiguredFor } from '../../support/configured-app.js';

jest.setTimeout(60_000);

describe('handler settings from configuration (broker)', () => {
  it.each(['staging', 'production'])('%s', async (name) => {
    const client = newClient();
    try {
      await expectConfiguredFor(client, {
        HOME_TOPIC: uniqueTopic(`${name}-home`),
        ORDERS_TOPIC: uniqueTopic(`${name}-orders`),
        ORDERS_SUBSCRIPTION: name,
        ORDERS_ATTEMPTS: name === 'staging' ? '2' : '9',
      });
    } finally {
      await client.close();
    }
  });
});

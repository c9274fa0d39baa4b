// Health after a permission grant, on the client under test: a role that may consume but not write dead-letter
// records starts with health down; once the permission is granted, health turns up on its own, with no message
// needing the refused producer in between.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { BabelQueueHealthIndicator, type BabelQueueModuleOptions } from '../../../lib/index.js';
import { onNative, uniqueTopic, waitFor } from '../../support/broker.js';
import { startWorkApp } from './support/work.js';
import {
  OutputRecorder,
  readToken,
  securedBroker,
  securedUrl,
  trust,
  type SecuredBrokerState,
} from './support/secured.js';
import { adminRequest, ROLES } from '../../../scripts/lib/secured-broker.mjs';

jest.setTimeout(120_000);

let broker: SecuredBrokerState;

beforeAll(async () => {
  broker = await securedBroker();
}, 330_000);

async function grantProduce(topic: string): Promise<void> {
  const created = await adminRequest(broker, 'PUT', `/admin/v2/persistent/public/default/${topic}`);
  if (![204, 409].includes(created.status)) throw new Error(`create ${topic}: HTTP ${created.status} ${created.body}`);
  const response = await adminRequest(
    broker,
    'POST',
    `/admin/v2/persistent/public/default/${topic}/permissions/${ROLES.limited}`,
    ['produce'],
  );
  if (response.status !== 204) throw new Error(`grant on ${topic}: HTTP ${response.status} ${response.body}`);
}

it(`health recovers on its own after the permission is granted (${onNative() ? 'native' : 'WebSocket'})`, async () => {
  const topic = uniqueTopic('grant-health');
  await grantProduce(topic); // retry copies are allowed, dead-letter records are not
  const output = new OutputRecorder();
  const { app } = await startWorkApp({
    serviceUrl: securedUrl(broker),
    auth: { token: readToken(broker.tokens.limited) },
    clientOptions: trust(broker.caFile),
    topic,
    logger: output.logger,
  } as BabelQueueModuleOptions);
  try {
    const health = app.get(BabelQueueHealthIndicator);
    expect(health.isHealthy('pulsar').pulsar.status).toBe('down');
    await grantProduce(`${topic}.dlq`);
    // No message is published: nothing but the periodic retry asks for the producer again.
    await waitFor('health up after the grant', () => health.isHealthy('pulsar').pulsar.status === 'up', 30_000);
    expect(health.isHealthy('pulsar').pulsar.problems).toEqual([]);
  } finally {
    await app.close();
  }
});

// auth.token as a supplier: both clients call it when they connect and again when they reconnect, so a rotated
// token is used without a restart. A TCP proxy in front of the secured broker's TLS port cuts the connections.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { BabelPulsarClient, BabelQueueModule } from '../../../lib/index.js';
import { onNative, uniqueTopic, waitFor } from '../../support/broker.js';
import { rootModule, startMicroservice } from '../module/support/apps.js';
import { TcpProxy } from '../websocket/support/tcp-proxy.js';
import { readToken, securedBroker, trust } from './support/secured.js';

jest.setTimeout(120_000);

it(`calls the token supplier on connect and on reconnect (${onNative() ? 'native' : 'WebSocket'})`, async () => {
  const broker = await securedBroker();
  const target = new URL(onNative() ? broker.serviceUrlTls.replace('pulsar+ssl', 'https') : broker.webUrlTls);
  const proxy = new TcpProxy(target.hostname, Number(target.port));
  await proxy.start();
  const proxied = onNative()
    ? `pulsar+ssl://127.0.0.1:${new URL(proxy.url).port}`
    : proxy.url.replace(/^http/, 'https');
  const tokens = [readToken(broker.tokens.app), readToken(broker.tokens.rotated)];
  const handedOut: string[] = [];
  let current = tokens[0]!;
  const supplier = async () => {
    handedOut.push(current);
    return current;
  };
  const { app } = await startMicroservice(
    rootModule({
      imports: [
        BabelQueueModule.forRoot({
          serviceUrl: proxied,
          auth: { token: supplier },
          clientOptions: trust(broker.caFile),
          topic: uniqueTopic('supplier'),
        }),
      ],
    }),
  );
  try {
    const publisher = app.get(BabelPulsarClient);
    await publisher.publish('urn:babel:secured:rotate', { n: 1 });
    expect(handedOut.length).toBeGreaterThanOrEqual(1);
    expect(new Set(handedOut)).toEqual(new Set([tokens[0]]));

    current = tokens[1]!; // rotation: from now on the supplier hands out the new token
    proxy.dropAll();
    await waitFor('a reconnect with the rotated token', () => handedOut.includes(tokens[1]!), 30_000);
    await waitFor(
      'a publish after the reconnect',
      () =>
        publisher.publish('urn:babel:secured:rotate', { n: 2 }).then(
          () => true,
          () => false,
        ),
      30_000,
    );
  } finally {
    await app.close();
    await proxy.stop();
  }
});

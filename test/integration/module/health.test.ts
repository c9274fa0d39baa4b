// BabelQueueHealthIndicator goes down when the broker becomes unreachable and up again when it is back.
// The shared broker is never stopped: a TCP proxy in front of it is cut and restored instead.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller, Inject, Injectable, Module } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import {
  BabelHandler,
  BabelPulsarClient,
  BabelQueueHealthIndicator,
  BabelQueueModule,
  PulsarWebSocketClient,
} from '../../../lib/index.js';
import { TcpProxy } from '../websocket/support/tcp-proxy.js';
import { rootModule, startMicroservice } from './support/apps.js';
import { quietLogger, uniqueTopic, waitFor, webUrl } from './support/helpers.js';

jest.setTimeout(90_000);

const PING = 'urn:babel:health:ping';

@Injectable()
class Pings {
  readonly received: number[] = [];
}

@Controller()
class PingController {
  constructor(@Inject(Pings) private readonly pings: Pings) {}

  @BabelHandler(PING)
  ping(@Payload() data: { n: number }) {
    this.pings.received.push(data.n);
  }
}

describe('BabelQueueHealthIndicator (live broker behind a TCP proxy)', () => {
  it('reports down while the broker is unreachable and up once it is back', async () => {
    const target = new URL(webUrl());
    const proxy = new TcpProxy(target.hostname, Number(target.port || 80));
    await proxy.start();
    const client = new PulsarWebSocketClient({
      serviceUrl: proxy.url,
      reconnect: { initialDelayMs: 100, maxDelayMs: 500 },
      keepAliveIntervalMs: 1000,
      operationTimeoutMs: 5000,
    });
    const topic = uniqueTopic('health');

    @Module({ providers: [Pings], exports: [Pings] })
    class PingsModule {}
    const { app } = await startMicroservice(
      rootModule({
        imports: [PingsModule, BabelQueueModule.forRoot({ client, topic, logger: quietLogger })],
        controllers: [PingController],
      }),
    );
    try {
      const health = app.get(BabelQueueHealthIndicator);
      const publisher = app.get(BabelPulsarClient);
      await publisher.publish(PING, { n: 1 });
      await waitFor('the first ping', () => app.get(Pings).received.includes(1));

      const up = health.isHealthy('pulsar');
      expect(up.pulsar.status).toBe('up');
      expect(up.pulsar.consumers).toMatchObject({
        status: 'connected',
        topics: [{ topic, active: expect.any(Number) }],
      });
      expect(up.pulsar.producers.total).toBeGreaterThanOrEqual(2); // the topic (publish + retry) and <topic>.dlq
      expect(up.pulsar.producers.connected).toBe(up.pulsar.producers.total);
      expect(up.pulsar.problems).toEqual([]);

      // Cut every connection and refuse new ones.
      proxy.pause();
      proxy.dropAll();
      const down = await waitFor('health to go down', () => {
        const result = health.isHealthy('pulsar');
        return result.pulsar.status === 'down' && result.pulsar.consumers.status === 'reconnecting' ? result : null;
      });
      expect(down.pulsar.producers.connected).toBeLessThan(down.pulsar.producers.total);
      expect(down.pulsar.problems).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^producer for .* is not connected$/),
          'the consumers are reconnecting',
        ]),
      );
      expect(health.check().healthy).toBe(false);

      // Restore: the WebSocket client reconnects through the proxy.
      proxy.resume();
      await waitFor('health to come back up', () => health.isHealthy().babelqueue.status === 'up', 30_000);
      expect(health.check()).toMatchObject({ healthy: true, problems: [] });

      // And the pipeline works again.
      await publisher.publish(PING, { n: 2 });
      await waitFor('the second ping', () => app.get(Pings).received.includes(2), 30_000);
    } finally {
      await app.close();
      await client.close();
      await proxy.stop();
    }
  });
});

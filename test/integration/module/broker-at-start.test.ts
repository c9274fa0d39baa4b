// brokerAtStart: 'optional' against a real address: nothing answers on it at start (a TCP proxy in front of the
// shared broker, refusing connections), the app boots with health down and publish fails within its time-out;
// when the proxy starts forwarding, the consumers subscribe and messages flow. The shared broker is never stopped.
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import {
  BabelHandler,
  BabelPulsarClient,
  BabelPulsarServer,
  BabelQueueHealthIndicator,
  BabelQueueModule,
  PublishError,
} from '../../../lib/index.js';
import { TcpProxy } from '../websocket/support/tcp-proxy.js';
import { nativeServiceUrl, onNative, uniqueTopic, waitFor, webUrl } from './support/helpers.js';

jest.setTimeout(90_000);

const received: number[] = [];

@Controller()
class PingController {
  @BabelHandler('urn:babel:late:ping')
  ping(@Payload() data: { n: number }): void {
    received.push(data.n);
  }
}

describe("brokerAtStart: 'optional' (real broker coming up late)", () => {
  it('boots with health down, publish fails within publishTimeoutMs, and consumes once the broker answers', async () => {
    const target = new URL(onNative() ? nativeServiceUrl() : webUrl());
    const proxy = new TcpProxy(target.hostname, Number(target.port));
    await proxy.start();
    proxy.pause(); // connections are refused: as if no broker listened there
    const serviceUrl = `${onNative() ? 'pulsar' : 'http'}://127.0.0.1:${proxy.port}`;
    const lines: string[] = [];
    const logger = { log: (m: string) => lines.push(m), warn: (m: string) => lines.push(m), error: () => {} };
    const topic = uniqueTopic('late');
    const moduleRef = await Test.createTestingModule({
      imports: [
        BabelQueueModule.forRoot({
          serviceUrl,
          topic,
          brokerAtStart: 'optional',
          publishTimeoutMs: 1500,
          logger,
          startupWarnings: false,
          clientOptions: onNative()
            ? { operationTimeoutSeconds: 2, connectionTimeoutMs: 1000 }
            : { operationTimeoutMs: 2000, reconnect: { initialDelayMs: 100, maxDelayMs: 500 } },
        }),
      ],
      controllers: [PingController],
    }).compile();
    const app = moduleRef.createNestMicroservice({ strategy: moduleRef.get(BabelPulsarServer), logger: false });
    try {
      await app.listen();
      const health = moduleRef.get(BabelQueueHealthIndicator);
      expect(health.isHealthy().babelqueue.status).toBe('down');
      expect(lines.filter((line) => line.includes('did not answer at start'))).toHaveLength(1);

      const publisher = moduleRef.get(BabelPulsarClient);
      const failed = await publisher.publish('urn:babel:late:ping', { n: 0 }).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(Error);
      expect(String((failed as Error).message)).toMatch(topic);
      if (failed instanceof PublishError) expect(failed.topic).toBe(topic);

      proxy.resume();
      await waitFor(
        'the consumers to subscribe',
        () => lines.some((line) => line.includes('the broker answered')),
        60_000,
      );
      await waitFor('health to come up', () => health.isHealthy().babelqueue.status === 'up', 30_000);
      await publisher.publish('urn:babel:late:ping', { n: 1 });
      await waitFor('the ping', () => received.includes(1), 30_000);
      expect(lines.filter((line) => line.includes('the broker answered'))).toHaveLength(1);
    } finally {
      await app.close();
      await proxy.stop();
    }
  });
});

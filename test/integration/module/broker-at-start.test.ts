// brokerAtStart: 'optional' against a real address: nothing answers on it at start (a TCP proxy in front of the
// shared broker, refusing connections), the app boots with health down and publish fails within its time-out;
// when the proxy starts forwarding, the consumers subscribe, the publisher's producer connects (one line each way
// for each) and messages flow. The shared broker is never stopped.
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
  it('loses nothing the app publishes while the broker comes back, before its consumers subscribed', async () => {
    const target = new URL(onNative() ? nativeServiceUrl() : webUrl());
    const proxy = new TcpProxy(target.hostname, Number(target.port));
    await proxy.start();
    proxy.pause();
    const serviceUrl = `${onNative() ? 'pulsar' : 'http'}://127.0.0.1:${proxy.port}`;
    const lines: string[] = [];
    const logger = { log: (m: string) => lines.push(m), warn: (m: string) => lines.push(m), error: () => {} };
    const moduleRef = await Test.createTestingModule({
      imports: [
        BabelQueueModule.forRoot({
          serviceUrl,
          topic: uniqueTopic('late-first'),
          brokerAtStart: 'optional',
          publishTimeoutMs: 10_000,
          logger,
          startupWarnings: false,
          clientOptions: onNative()
            ? { operationTimeoutSeconds: 5, connectionTimeoutMs: 1000 }
            : { operationTimeoutMs: 5000, reconnect: { initialDelayMs: 100, maxDelayMs: 500 } },
        }),
      ],
      controllers: [PingController],
    }).compile();
    const app = moduleRef.createNestMicroservice({ strategy: moduleRef.get(BabelPulsarServer), logger: false });
    const consuming = () => lines.some((line) => line.includes('the broker answered') && line.includes('consuming'));
    try {
      await app.listen();
      // A few of the server's attempts fail first, so that its next one is seconds away (its pauses double).
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      proxy.resume();
      // Published as soon as the broker answers: the server has not subscribed yet.
      await moduleRef.get(BabelPulsarClient).publish('urn:babel:late:ping', { n: 100 });
      expect(consuming()).toBe(false);
      await waitFor('the ping published before the subscription', () => received.includes(100), 60_000);
      expect(consuming()).toBe(true);
    } finally {
      await app.close();
      await proxy.stop();
    }
  });

  it('boots with health down, publish fails within publishTimeoutMs, and consumes and publishes once the broker answers', async () => {
    const target = new URL(onNative() ? nativeServiceUrl() : webUrl());
    const proxy = new TcpProxy(target.hostname, Number(target.port));
    await proxy.start();
    proxy.pause(); // connections are refused: as if no broker listened there
    const serviceUrl = `${onNative() ? 'pulsar' : 'http'}://127.0.0.1:${proxy.port}`;
    const lines: string[] = [];
    const logger = { log: (m: string) => lines.push(m), warn: (m: string) => lines.push(m), error: () => {} };
    const topic = uniqueTopic('late');
    const fullName = `persistent://public/default/${topic}`;
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
      const waiting = () => lines.filter((line) => line.includes('did not answer at start'));
      expect(waiting().filter((line) => line.includes('without consuming'))).toHaveLength(1);
      // The publisher's first attempt ends within the client's own time-outs, in the background.
      await waitFor('the publisher to report', () => waiting().length === 2, 30_000);
      expect(waiting().filter((line) => line.includes(`publishing to ${fullName} fails`))).toHaveLength(1);

      const publisher = moduleRef.get(BabelPulsarClient);
      const failed = await publisher.publish('urn:babel:late:ping', { n: 0 }).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(Error);
      expect(String((failed as Error).message)).toMatch(topic);
      if (failed instanceof PublishError) expect(failed.topic).toBe(topic);

      proxy.resume();
      const answered = () => lines.filter((line) => line.includes('the broker answered'));
      await waitFor('the consumers to subscribe', () => answered().some((line) => line.includes('consuming')), 60_000);
      await waitFor(
        'the publisher to connect',
        () => answered().some((line) => line.endsWith(`publishing to ${fullName}`)),
        60_000,
      );
      await waitFor('health to come up', () => health.isHealthy().babelqueue.status === 'up', 30_000);
      await publisher.publish('urn:babel:late:ping', { n: 1 });
      await waitFor('the ping', () => received.includes(1), 30_000);
      expect(answered()).toHaveLength(2);
      expect(waiting()).toHaveLength(2);
    } finally {
      await app.close();
      await proxy.stop();
    }
  });
});

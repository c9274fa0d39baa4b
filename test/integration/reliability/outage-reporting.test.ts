// An outage is logged once when it starts and once when it ends (topic, how long), the
// reconnect backoff is capped low, and a silently stalled connection is noticed by the keepalive.
// WebSocket-specific: the cut is made by a TCP proxy in front of the broker's web port.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { BabelHandler, EnvelopeCodec } from '../../../lib/index.js';
import { pulsarProperties } from '../../../lib/pulsar/index.js';
import { PulsarWebSocketClient } from '../../../lib/pulsar/websocket/index.js';
import { resolveOptions } from '../../../lib/pulsar/websocket/options.js';
import { ConnectionWatch } from '../../../lib/nest/server/status-monitor.js';
import { sleep, uniqueTopic, waitFor, webUrl } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';
import { TcpProxy } from '../websocket/support/tcp-proxy.js';

jest.setTimeout(120_000);

const URN = 'urn:babel:reliability:outage';
let proxy: TcpProxy;
let client: PulsarWebSocketClient;
let service: RunningService | null = null;
const lines: string[] = [];
const logger = {
  log: (m: string) => void lines.push(`log ${m}`),
  warn: (m: string) => void lines.push(`warn ${m}`),
  error: (m: string) => void lines.push(`error ${m}`),
  debug: () => {},
};

beforeEach(async () => {
  const target = new URL(webUrl());
  proxy = new TcpProxy(target.hostname, Number(target.port));
  await proxy.start();
  client = new PulsarWebSocketClient({ serviceUrl: proxy.url });
  lines.length = 0;
});
afterEach(async () => {
  await service?.close();
  service = null;
  await client.close();
  await proxy.stop();
});

it('defaults: backoff capped at 3 s, keepalive every 5 s', () => {
  const options = resolveOptions({ serviceUrl: 'http://127.0.0.1:1' });
  expect(options.reconnect.maxDelayMs).toBe(3000);
  expect(options.keepAliveIntervalMs).toBe(5000);
});

it('ConnectionWatch reports each outage once, with its length', () => {
  const watch = new ConnectionWatch();
  expect(watch.observe('t', true, 0)).toBeNull();
  expect(watch.observe('t', false, 1000)).toEqual({ kind: 'down', topic: 't' });
  expect(watch.observe('t', false, 2000)).toBeNull();
  expect(watch.observe('t', true, 4500)).toEqual({ kind: 'up', topic: 't', downForMs: 3500 });
  expect(watch.observe('t', true, 5000)).toBeNull();
});

async function startConsuming(topic: string, handled: unknown[]): Promise<void> {
  @Controller()
  class Outage {
    @BabelHandler(URN)
    handle() {
      handled.push(1);
    }
  }
  service = await startService([Outage], { client, topics: topic, logger });
}

async function publishDirect(topic: string): Promise<void> {
  const direct = new PulsarWebSocketClient({ serviceUrl: webUrl() });
  const envelope = EnvelopeCodec.make(URN, {}, { queue: topic });
  const producer = await direct.createProducer({ topic });
  await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
  await direct.close();
}

it('logs a network cut once when it starts and once when it ends, then consumes again within seconds', async () => {
  const topic = uniqueTopic('cut');
  const handled: unknown[] = [];
  await startConsuming(topic, handled);
  proxy.pause();
  proxy.dropAll();
  await sleep(6000); // a cut long enough for the old 30 s cap to have fallen far behind
  proxy.resume();
  const cutEnded = Date.now();
  await waitFor('the reconnect line', () => lines.some((l) => l.includes('reconnected after')), 15_000);
  // Well inside what the old 30 s backoff cap could give after a cut; loose, because the machine may be loaded.
  expect(Date.now() - cutEnded).toBeLessThan(15_000);
  const down = lines.filter((l) => l.includes('lost its broker connection'));
  const up = lines.filter((l) => l.includes('reconnected after'));
  expect(down).toEqual([expect.stringContaining(topic)]);
  expect(up).toEqual([expect.stringMatching(new RegExp(`${topic} reconnected after \\d+(\\.\\d)? s`))]);
  await publishDirect(topic);
  await waitFor('the message after the cut', () => handled.length === 1);
});

it('notices a silent stall (traffic black-holed, sockets open) through the keepalive', async () => {
  const topic = uniqueTopic('stall');
  const handled: unknown[] = [];
  await startConsuming(topic, handled);
  proxy.freeze();
  await waitFor('the outage line', () => lines.some((l) => l.includes('lost its broker connection')), 20_000);
  proxy.thaw();
  // A reconnect attempt made while traffic was black-holed waits out its handshake time-out (operationTimeoutMs,
  // 30 s) before the next one goes through.
  await waitFor('the reconnect line', () => lines.some((l) => l.includes('reconnected after')), 45_000);
  await publishDirect(topic);
  await waitFor('the message after the stall', () => handled.length === 1);
});

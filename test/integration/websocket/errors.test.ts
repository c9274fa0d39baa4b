import { jest } from '@jest/globals';
import http from 'node:http';
import net from 'node:net';
import { PulsarWebSocketClient, PulsarWebSocketError } from '../../../lib/pulsar/websocket/index.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { adminRequest, BROKER_URL, liveClientFixture, rejectionOf, uniqueTopic } from './support/helpers.js';

jest.setTimeout(30000);

describe('PulsarWebSocketClient: honest failures (live broker)', () => {
  const live = liveClientFixture();
  const topic = live.topic;
  let client: PulsarWebSocketClient;
  beforeAll(() => {
    client = live.client();
  });

  it('receive(timeout) rejects with the native TimeOut message', async () => {
    const consumer = await client.subscribe({ topic: topic('timeout'), subscription: 'sub' });
    const started = Date.now();
    const err = await rejectionOf(consumer.receive(300));
    expect(err).toBeInstanceOf(PulsarWebSocketError);
    expect(err.message).toBe('Failed to receive message: TimeOut');
    expect(err.code).toBe('TimeOut');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    // The consumer is still usable afterwards.
    expect(consumer.isConnected()).toBe(true);
  });

  it('rejects a refused connection with an error naming the topic and the cause', async () => {
    const refused = new PulsarWebSocketClient({ serviceUrl: 'http://127.0.0.1:1', operationTimeoutMs: 5000 });
    try {
      const err = await rejectionOf(refused.createProducer({ topic: 'refused-topic' }));
      expect(err).toBeInstanceOf(PulsarWebSocketError);
      expect(err.code).toBe('ConnectError');
      expect(err.topic).toBe('persistent://public/default/refused-topic');
      expect(err.message).toContain('persistent://public/default/refused-topic');
      expect(err.message).toContain('ECONNREFUSED');
      const subErr = await rejectionOf(refused.subscribe({ topic: 'refused-topic', subscription: 's' }));
      expect(subErr.code).toBe('ConnectError');
      expect(subErr.message).toContain('subscription "s"');
    } finally {
      await refused.close();
    }
  });

  it('rejects a second Exclusive consumer with the broker 409 and its message', async () => {
    const name = topic('exclusive');
    await client.subscribe({ topic: name, subscription: 'only-one' });
    const err = await rejectionOf(client.subscribe({ topic: name, subscription: 'only-one' }));
    expect(err.code).toBe('HandshakeRejected');
    expect(err.status).toBe(409);
    expect(err.topic).toBe(`persistent://public/default/${name}`);
    expect(err.message).toContain('HTTP 409');
    expect(err.message).toContain('Exclusive consumer is already connected');
    expect(err.message).toContain(name);
    expect(String(err.brokerMessage)).toContain('Exclusive consumer is already connected');
  });

  it('reports 404 for a namespace that does not exist', async () => {
    const err = await rejectionOf(
      client.createProducer({ topic: `persistent://public/no-such-ns-${uniqueTopic('x')}/t` }),
    );
    expect(err.code).toBe('HandshakeRejected');
    expect(err.status).toBe(404);
    expect(err.message).toContain('Namespace not found');
  });

  it('rejects a send with the broker error ack (terminated topic), naming the topic and errorMsg', async () => {
    const name = topic('terminated');
    const producer = await client.createProducer({ topic: name });
    await producer.send({ data: Buffer.from('before') });
    const terminated = await adminRequest('POST', `persistent/public/default/${name}/terminate`);
    expect(terminated.status).toBe(200);
    const err = await rejectionOf(producer.send({ data: Buffer.from('after') }));
    expect(err.code).toBe('SendError');
    expect(err.topic).toBe(`persistent://public/default/${name}`);
    expect(err.message).toContain(`persistent://public/default/${name}`);
    expect(err.message).toContain('send-error:8');
    expect(err.message).toContain('Topic was already terminated');
    // The socket survives an error ack; a new producer is refused (503).
    expect(producer.isConnected()).toBe(true);
    const refused = await rejectionOf(client.createProducer({ topic: name }));
    expect(refused.status).toBe(503);
  });

  it('times out a send that gets no ack (sendTimeoutMs) and rejects oversize frames up front', async () => {
    const proxy = new TcpProxy('127.0.0.1', Number(new URL(BROKER_URL).port || 80));
    await proxy.start();
    const viaProxy = new PulsarWebSocketClient({ serviceUrl: proxy.url, keepAliveIntervalMs: 0 });
    try {
      const producer = await viaProxy.createProducer({ topic: topic('sendtimeout'), sendTimeoutMs: 400 });
      proxy.freeze();
      const err = await rejectionOf(producer.send({ data: Buffer.from('lost in the void') }));
      expect(err.code).toBe('SendTimeout');
      expect(err.message).toContain('400 ms');
      expect(err.message).toContain(producer.getTopic());
      proxy.thaw();

      const big = await rejectionOf(producer.send({ data: Buffer.alloc(800 * 1024) }));
      expect(big.code).toBe('MessageTooBig');
      expect(big.message).toContain(producer.getTopic());
      await expect(producer.send({ data: Buffer.alloc(600 * 1024, 7) })).resolves.toBeDefined();
    } finally {
      await viaProxy.close();
      await proxy.stop();
    }
  });

  it('validates arguments with clear errors', async () => {
    const producer = await client.createProducer({ topic: topic('args') });
    const bad = [
      { data: 'not a buffer' },
      { data: Buffer.from('x'), properties: { n: 1 } },
      { data: Buffer.from('x'), deliverAfter: -5 },
      { data: Buffer.from('x'), deliverAt: Number.NaN },
    ];
    for (const message of bad) {
      const err = await rejectionOf(producer.send(message as never));
      expect(err.code).toBe('InvalidArgument');
      expect(err.message).toContain(producer.getTopic());
    }
    const subErr = await rejectionOf(
      client.subscribe({ topic: 'x', subscription: 's', subscriptionType: 'Bogus' as never }),
    );
    expect(subErr.code).toBe('InvalidArgument');
    expect(() => new PulsarWebSocketClient({ serviceUrl: 'pulsar://127.0.0.1:6650' })).toThrow(/web service URL/);
    expect(() => new PulsarWebSocketClient({ serviceUrl: 'not a url' })).toThrow(PulsarWebSocketError);
  });

  it('sends the token as a Bearer header and reports a 401 handshake with the server text', async () => {
    let seenAuth: string | undefined;
    const server = http.createServer();
    server.on('upgrade', (req, socket) => {
      seenAuth = req.headers.authorization;
      const body = '<html><head><title>Error 401 Authentication required</title></head></html>';
      socket.end(
        `HTTP/1.1 401 Unauthorized\r\nContent-Type: text/html;charset=iso-8859-1\r\nContent-Length: ${body.length}\r\n` +
          `Connection: close\r\n\r\n${body}`,
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const authed = new PulsarWebSocketClient({ serviceUrl: `ws://127.0.0.1:${port}`, token: 'secret-token' });
    try {
      const err = await rejectionOf(authed.createProducer({ topic: 'auth-topic' }));
      expect(seenAuth).toBe('Bearer secret-token');
      expect(err.code).toBe('HandshakeRejected');
      expect(err.status).toBe(401);
      expect(err.message).toContain('Authentication required');
      expect(err.message).toContain('persistent://public/default/auth-topic');
    } finally {
      await authed.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('gives up a handshake that never completes after operationTimeoutMs', async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const slow = new PulsarWebSocketClient({ serviceUrl: `http://127.0.0.1:${port}`, operationTimeoutMs: 300 });
    try {
      const err = await rejectionOf(slow.subscribe({ topic: 'silent', subscription: 's' }));
      expect(err.code).toBe('HandshakeTimeout');
      expect(err.message).toContain('300 ms');
      expect(err.message).toContain('persistent://public/default/silent');
    } finally {
      await slow.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

// The one line of a failed start: the client, the URL and the likely cause, from each client's errors; and the
// connection check that tells at once that nothing listens at the service URL.
import net from 'node:net';
import { createPulsarClient } from '../../../lib/pulsar/client-factory.js';
import {
  assertSomethingListens,
  likelyCause,
  rememberClientUrl,
  startupFailure,
} from '../../../lib/pulsar/startup-failure.js';

const errno = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('likelyCause', () => {
  it.each<[string, unknown, 'native' | 'websocket', RegExp]>([
    [
      'nothing listens (WebSocket)',
      errno('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9999'),
      'websocket',
      /^nothing listens at 127\.0\.0\.1:9999 .*web service port/,
    ],
    [
      'nothing listens (native)',
      errno('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9999'),
      'native',
      /^nothing listens at 127\.0\.0\.1:9999 .*binary port/,
    ],
    [
      'the binary port under http://',
      new Error('Could not connect producer at ws://h:6650/ws: ECONNRESET: socket hang up'),
      'websocket',
      /binary port\? The WebSocket client needs the web service port/,
    ],
    [
      'TLS',
      new Error('Could not connect producer: the broker certificate is not trusted (UNABLE_TO_VERIFY_LEAF_SIGNATURE)'),
      'websocket',
      /^the TLS handshake failed/,
    ],
    [
      'authentication (WebSocket 401)',
      Object.assign(new Error('Broker rejected producer: HTTP 401 Unauthorized'), { status: 401 }),
      'websocket',
      /authentication/,
    ],
    [
      'authentication (native)',
      new Error('Failed to create producer: AuthenticationError'),
      'native',
      /authentication/,
    ],
    ['authorization', new Error('Failed to create producer: AuthorizationError'), 'native', /authorization/],
    ['a time-out', new Error('Failed to create producer: TimeOut'), 'native', /^no answer in time/],
  ])('%s', (_name, error, kind, expected) => {
    expect(likelyCause(error, kind, 'pulsar://127.0.0.1:9999')).toMatch(expected);
  });

  it('says nothing it does not know', () => {
    expect(likelyCause(new Error('something else'), 'native', 'pulsar://h:6650')).toBeUndefined();
  });
});

describe('startupFailure', () => {
  it('is one line naming the URL and the client, with the reason last and the error as cause', () => {
    const client = {};
    rememberClientUrl(client, 'http://127.0.0.1:6650', 'websocket');
    const original = new Error('Could not connect producer:\n  ECONNRESET: socket hang up');
    const failure = startupFailure(original, client);
    expect(failure.message).not.toContain('\n');
    expect(failure.message).toMatch(
      /^BabelPulsarServer could not start \(http:\/\/127\.0\.0\.1:6650, built-in WebSocket client\): the server at .*binary port.*\(reason: Could not connect producer: ECONNRESET: socket hang up\)$/,
    );
    expect(failure.cause).toBe(original);
  });

  it("keeps the client's own message for a client it does not know", () => {
    expect(startupFailure(new Error('in-memory broker unavailable'), {}).message).toBe(
      'BabelPulsarServer could not start: in-memory broker unavailable',
    );
  });
});

describe('assertSomethingListens', () => {
  it('rejects at once where nothing listens, passes where something does, skips a client it does not know', async () => {
    const server = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const { client } = await createPulsarClient({ serviceUrl: `http://127.0.0.1:${port}` });
    await expect(assertSomethingListens(client)).resolves.toBeUndefined();
    await new Promise((resolve) => server.close(resolve));
    await expect(assertSomethingListens(client)).rejects.toThrow(/ECONNREFUSED 127\.0\.0\.1:\d+/);
    await expect(assertSomethingListens({})).resolves.toBeUndefined();
    await client.close();
  });
});

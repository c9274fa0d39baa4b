// TLS against the secured broker, on the client under test, as the package creates it: the broker's host name is
// checked by default (a name the certificate does not carry is refused), turning the check off or accepting any
// certificate is an explicit option that logs a warning, and a failed handshake says which check failed.
import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { jest } from '@jest/globals';
import { type BabelQueueModuleOptions } from '../../../lib/index.js';
import { createPulsarClient } from '../../../lib/pulsar/index.js';
import { toLibraryClient } from '../../../lib/pulsar/library-client.js';
import { onNative, uniqueTopic } from '../../support/broker.js';
import { startWorkApp } from './support/work.js';
import {
  OutputRecorder,
  readToken,
  securedBroker,
  securedUrl,
  trust,
  type SecuredBrokerState,
} from './support/secured.js';

jest.setTimeout(120_000);

let broker: SecuredBrokerState;
/** Forwards 127.0.0.2 to the broker's TLS port: the same broker under an address its certificate does not name. */
let forwarder: net.Server;
let forwardedUrl: string;

beforeAll(async () => {
  broker = await securedBroker();
  const target = new URL(securedUrl(broker));
  forwarder = net.createServer((socket) => {
    const upstream = net.connect(Number(target.port), '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    const end = () => {
      socket.destroy();
      upstream.destroy();
    };
    socket.once('error', end).once('close', end);
    upstream.once('error', end).once('close', end);
  });
  await new Promise<void>((resolve) => forwarder.listen(0, '127.0.0.2', resolve));
  const { port } = forwarder.address() as net.AddressInfo;
  forwardedUrl = `${target.protocol}//127.0.0.2:${port}`;
}, 330_000);

afterAll(async () => {
  await new Promise((resolve) => forwarder?.close(resolve));
});

function moduleOptions(overrides: Partial<BabelQueueModuleOptions>, output: OutputRecorder): BabelQueueModuleOptions {
  return {
    serviceUrl: securedUrl(broker),
    auth: { token: readToken(broker.tokens.app) },
    clientOptions: trust(broker.caFile),
    topic: uniqueTopic('tls'),
    logger: output.logger,
    ...overrides,
  } as BabelQueueModuleOptions;
}

/** Starts the app and closes it again; resolves to the start-up error, or undefined when it started. */
async function startUpFailure(options: BabelQueueModuleOptions): Promise<Error | undefined> {
  try {
    const { app } = await startWorkApp(options);
    await app.close();
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

const client = onNative() ? 'native pulsar+ssl://' : 'WebSocket https://';

describe(`TLS defaults (${client})`, () => {
  it('refuses by default a broker whose certificate does not carry the host name, naming the mismatch', async () => {
    const output = new OutputRecorder();
    const failure = await startUpFailure(moduleOptions({ serviceUrl: forwardedUrl }, output));
    expect(failure).toBeInstanceOf(Error);
    expect(failure!.message).toMatch(/TLS: hostname mismatch/);
  });

  it('connects to that broker only with tlsValidateHostname: false, and logs a warning', async () => {
    const output = new OutputRecorder();
    const options = moduleOptions(
      { serviceUrl: forwardedUrl, clientOptions: { ...trust(broker.caFile), tlsValidateHostname: false } },
      output,
    );
    expect(await startUpFailure(options)).toBeUndefined();
    expect(output.lines.join('\n')).toMatch(/warn: tlsValidateHostname is false/);
  });

  it('names an untrusted CA', async () => {
    const output = new OutputRecorder();
    const failure = await startUpFailure(moduleOptions({ clientOptions: trust(broker.otherCaFile) }, output));
    expect(failure!.message).toMatch(/TLS: the broker's certificate is not signed by a trusted CA/);
  });

  it('tlsAllowInsecureConnection: true accepts the untrusted certificate on both clients, with a warning', async () => {
    const output = new OutputRecorder();
    const options = moduleOptions(
      { clientOptions: { ...trust(broker.otherCaFile), tlsAllowInsecureConnection: true } },
      output,
    );
    expect(await startUpFailure(options)).toBeUndefined();
    expect(output.lines.join('\n')).toMatch(/warn: tlsAllowInsecureConnection is true/);
  });
});

describe(`an expired broker certificate (${client})`, () => {
  // No broker serves an expired certificate, so a TLS server that only completes handshakes stands in for one: the
  // client's certificate check is what is under test, and it runs before any Pulsar byte is exchanged.
  let dir: string;
  let server: tls.Server;
  let port: number;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bq-expired-'));
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=bq expired test CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
    );
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=127.0.0.1',
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
    );
    fs.writeFileSync(path.join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\n');
    // -days -1: a certificate whose validity ended a day ago.
    openssl(
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '-1',
      '-extfile',
      'server.ext',
      '-out',
      'server.pem',
    );
    server = tls.createServer(
      { key: fs.readFileSync(path.join(dir, 'server.key')), cert: fs.readFileSync(path.join(dir, 'server.pem')) },
      (socket) => socket.destroy(),
    );
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('names the expired certificate', async () => {
    const serviceUrl = onNative() ? `pulsar+ssl://127.0.0.1:${port}` : `https://127.0.0.1:${port}`;
    const { client } = await createPulsarClient({
      serviceUrl,
      clientOptions: { ...trust(path.join(dir, 'ca.pem')) },
    });
    try {
      await expect(toLibraryClient(client).createProducer({ topic: uniqueTopic('expired') })).rejects.toThrow(
        /TLS: the broker's certificate has expired/,
      );
    } finally {
      await client.close();
    }
  });
});

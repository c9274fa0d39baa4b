// The TLS switches both clients share: their defaults, their warnings, the native client's config, and the words a
// failed certificate check is reported in.
import { createPulsarClient } from '../../../lib/pulsar/client-factory.js';
import { describeTlsError, firstHostPort, resolveTls } from '../../../lib/pulsar/tls.js';
import { toWebSocketBases } from '../../../lib/pulsar/websocket/handshake.js';
import { PulsarWebSocketClient } from '../../../lib/pulsar/websocket/index.js';

class FakeNativeClient {
  static configs: Array<Record<string, unknown>> = [];
  constructor(readonly config: Record<string, unknown>) {
    FakeNativeClient.configs.push(config);
  }
  async close() {
    return null;
  }
}
const fakeNative = { Client: FakeNativeClient, AuthenticationToken: class {} };
const loadNative = async () => fakeNative;

describe('resolveTls', () => {
  it('verifies the certificate and the host name by default, without a warning', () => {
    expect(resolveTls({})).toEqual({ validateHostname: true, allowInsecure: false, warnings: [] });
  });

  it('warns when the host name check is turned off, and when any certificate is accepted', () => {
    expect(resolveTls({ tlsValidateHostname: false }).warnings).toEqual([
      expect.stringMatching(/^tlsValidateHostname is false/),
    ]);
    expect(resolveTls({ tlsAllowInsecureConnection: true }).warnings).toEqual([
      expect.stringMatching(/^tlsAllowInsecureConnection is true/),
    ]);
  });

  it('refuses a switch that is not a boolean (the string "false" would read as on)', () => {
    expect(() => resolveTls({ tlsValidateHostname: 'false' })).toThrow(/tlsValidateHostname must be true or false/);
  });
});

describe('the native client the package creates', () => {
  beforeEach(() => {
    FakeNativeClient.configs = [];
  });

  it('checks the host name by default', async () => {
    const warnings: string[] = [];
    await createPulsarClient(
      { serviceUrl: 'pulsar+ssl://broker:6651' },
      { loadNative, warn: (message) => warnings.push(message) },
    );
    expect(FakeNativeClient.configs[0]).toMatchObject({ tlsValidateHostname: true, tlsAllowInsecureConnection: false });
    expect(warnings).toEqual([]);
  });

  it('turns it off only when told, with a warning', async () => {
    const warnings: string[] = [];
    await createPulsarClient(
      { serviceUrl: 'pulsar+ssl://broker:6651', clientOptions: { tlsValidateHostname: false } },
      { loadNative, warn: (message) => warnings.push(message) },
    );
    expect(FakeNativeClient.configs[0]).toMatchObject({ tlsValidateHostname: false });
    expect(warnings).toEqual([expect.stringMatching(/tlsValidateHostname is false/)]);
  });

  it('refuses a non-boolean switch with a clear error', async () => {
    await expect(
      createPulsarClient(
        { serviceUrl: 'pulsar+ssl://broker:6651', clientOptions: { tlsAllowInsecureConnection: 'yes' } },
        { loadNative },
      ),
    ).rejects.toThrow(/clientOptions: tlsAllowInsecureConnection must be true or false/);
  });
});

describe('the WebSocket client', () => {
  it('takes the same switches and warns the same way', async () => {
    const warnings: string[] = [];
    const { client } = await createPulsarClient(
      { serviceUrl: 'https://broker:8443', clientOptions: { tlsAllowInsecureConnection: true } },
      { warn: (message) => warnings.push(message) },
    );
    expect(client).toBeInstanceOf(PulsarWebSocketClient);
    expect(warnings).toEqual([expect.stringMatching(/tlsAllowInsecureConnection is true/)]);
    expect(() => new PulsarWebSocketClient({ serviceUrl: 'https://b', tlsValidateHostname: 0 as never })).toThrow(
      /tlsValidateHostname must be true or false/,
    );
  });
});

describe('describeTlsError', () => {
  const error = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it.each([
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', /not signed by a trusted CA/],
    ['SELF_SIGNED_CERT_IN_CHAIN', /not signed by a trusted CA/],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', /not signed by a trusted CA/],
    ['ERR_TLS_CERT_ALTNAME_INVALID', /hostname mismatch/],
    ['CERT_HAS_EXPIRED', /has expired/],
    ['CERT_NOT_YET_VALID', /not valid yet/],
  ])('%s', (code, words) => {
    expect(describeTlsError(error(code))).toMatch(words);
  });

  it('leaves other errors alone', () => {
    expect(describeTlsError(error('ECONNREFUSED'))).toBeUndefined();
    expect(describeTlsError('text')).toBeUndefined();
  });
});

describe('service URL lists', () => {
  it('maps each web service to its WebSocket base; an entry without a scheme takes the first one', () => {
    expect(toWebSocketBases('http://a:8080,b:8081')).toEqual(['ws://a:8080', 'ws://b:8081']);
    expect(toWebSocketBases('https://a:8443, wss://b:8443/')).toEqual(['wss://a:8443', 'wss://b:8443']);
    expect(toWebSocketBases('http://a:8080')).toEqual(['ws://a:8080']);
  });

  it('refuses an empty entry', () => {
    expect(() => toWebSocketBases('http://a:8080,,b:1')).toThrow(/empty entry/);
  });

  it('finds the first host and port of a native list', () => {
    expect(firstHostPort('pulsar+ssl://a:6652,b:6652', 6651)).toEqual({ host: 'a', port: 6652 });
    expect(firstHostPort('pulsar+ssl://[::1]', 6651)).toEqual({ host: '::1', port: 6651 });
  });
});

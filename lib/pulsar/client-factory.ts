import { raiseLibraryError } from '../options/option-table.js';
import { errorText } from '../envelope/error-text.js';
/**
 * Builds a Pulsar client from a service URL: the scheme picks the implementation.
 *
 * - `pulsar://` and `pulsar+ssl://` → the native `pulsar-client` package (an optional peer dependency,
 *   loaded with a dynamic import only when such a URL is used);
 * - `http://`, `https://`, `ws://` and `wss://` → the built-in PulsarWebSocketClient.
 */
import { BabelQueueError } from '../envelope/index.js';
import type { PulsarClientLike } from './client-types.js';
import { rememberServiceUrl } from './native/adapter.js';
import { rememberAdminAccess } from './topic-lister.js';
import { rememberClientUrl } from './startup-failure.js';
import type { PulsarClientKind } from './client-types.js';
import { resolveTls } from './tls.js';
import { PulsarWebSocketClient, type TokenSupplier } from './websocket/index.js';
import { resolveOptions as resolveWebSocketOptions } from './websocket/options.js';

export type { PulsarClientKind } from './client-types.js';

export interface PulsarAuthOptions {
  /**
   * A JWT sent to the broker (native: AuthenticationToken; WebSocket: `Authorization: Bearer`), or a function that
   * returns the current one: both clients call it whenever they (re)connect, so a rotated token needs no restart.
   */
  token: string | TokenSupplier;
}

export interface PulsarClientSettings {
  serviceUrl: string;
  auth?: PulsarAuthOptions;
  /**
   * Extra options for the client the scheme selects, merged under `serviceUrl` and the token: the native
   * `ClientConfig` (e.g. `operationTimeoutSeconds`, `tlsTrustCertsFilePath`) or the WebSocket client's options
   * (e.g. `operationTimeoutMs`, `reconnect`, `keepAliveIntervalMs`).
   */
  clientOptions?: Record<string, unknown>;
}

/**
 * What this library uses of the `pulsar-client` module. The tests check it against the package's published types
 * (scripts/check-native-types.mjs), with `Auth` = its AuthenticationToken class.
 */
export interface NativePulsarModule<Auth = unknown> {
  Client: new (config: {
    serviceUrl: string;
    authentication?: Auth;
    operationTimeoutSeconds?: number;
    connectionTimeoutMs?: number;
    messageListenerThreads?: number;
    tlsValidateHostname?: boolean;
    tlsAllowInsecureConnection?: boolean;
  }) => PulsarClientLike;
  AuthenticationToken: new (params: { token: string | (() => Promise<string>) }) => Auth;
}

/** What createPulsarClient and LazyPulsarClient take besides the settings (tests stand in a native module here). */
export interface CreateClientDependencies {
  /** Loads the `pulsar-client` module; defaults to a dynamic import. */
  loadNative?: () => Promise<unknown>;
  /** Where a warning about weakened TLS goes; defaults to process.emitWarning. */
  warn?: (message: string) => void;
}

const emitWarning = (message: string): void => process.emitWarning(message, { code: 'BABELQUEUE_TLS_UNVERIFIED' });

export const NATIVE_PACKAGE = 'pulsar-client';

/**
 * Better defaults than the native client's, overridable with `clientOptions`:
 * - it waits 30 s before a dead broker or a missing namespace is reported; a service starting up should know
 *   within seconds;
 * - it has one listener thread for all consumers; a consumer with a zero receiver queue takes its messages on one
 *   (the others receive them), and waits on it while its handlers are all busy: with a thread per topic (up to 8),
 *   a busy topic does not hold back another.
 */
export const NATIVE_DEFAULTS = {
  operationTimeoutSeconds: 10,
  connectionTimeoutMs: 5_000,
  messageListenerThreads: 8,
} as const;

const NATIVE_SCHEMES = ['pulsar:', 'pulsar+ssl:'];
const WEBSOCKET_SCHEMES = ['http:', 'https:', 'ws:', 'wss:'];

/** Which client a service URL needs; throws a BabelQueueError naming the allowed schemes. */
export function clientKindFor(
  serviceUrl: unknown,
  optionName = 'serviceUrl',
  raise: (message: string) => never = raiseLibraryError,
): PulsarClientKind {
  if (typeof serviceUrl !== 'string' || serviceUrl.trim() === '') {
    return raise(`${optionName} must be a non-blank URL such as pulsar://localhost:6650 or http://localhost:8080`);
  }
  let protocol: string;
  try {
    // A list of brokers (`pulsar://a:6650,b:6650`, `http://a:8080,b:8080`): the scheme is the first entry's.
    protocol = new URL(serviceUrl.trim().split(',')[0]!).protocol.toLowerCase();
  } catch {
    return raise(
      `${optionName} ${JSON.stringify(serviceUrl)} is not a URL (e.g. pulsar://localhost:6650 or http://localhost:8080)`,
    );
  }
  if (NATIVE_SCHEMES.includes(protocol)) return 'native';
  if (WEBSOCKET_SCHEMES.includes(protocol)) return 'websocket';
  return raise(
    `${optionName} ${JSON.stringify(serviceUrl)} has an unsupported scheme ${JSON.stringify(protocol)}: use pulsar:// or pulsar+ssl:// ` +
      `(native ${NATIVE_PACKAGE} client) or http://, https://, ws://, wss:// (built-in WebSocket client)`,
  );
}

// Loaded on first use, so the package works without pulsar-client installed. The ESM build (dist/esm) keeps
// import(); the CommonJS build (dist/cjs) compiles it to require(), which is what a CommonJS host wants: Jest
// without --experimental-vm-modules cannot run a real import() (pulsar-client is itself CommonJS).
const dynamicImport = (specifier: string): Promise<unknown> => import(specifier);

function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const message = errorText(error);
  // Only the package itself missing: a module missing *inside* it means it is installed but broken.
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    /Cannot find (package|module) ['"]pulsar-client['"]/.test(message)
  );
}

function nativeModuleOf(loaded: unknown): NativePulsarModule {
  const candidates = [loaded, (loaded as { default?: unknown } | null)?.default];
  for (const candidate of candidates) {
    const mod = candidate as Partial<NativePulsarModule> | null | undefined;
    if (mod && typeof mod.Client === 'function' && typeof mod.AuthenticationToken === 'function')
      return mod as NativePulsarModule;
  }
  throw new BabelQueueError(
    `the ${NATIVE_PACKAGE} module was loaded but exports no Client/AuthenticationToken classes`,
  );
}

/** A pulsar:// or pulsar+ssl:// service URL where the `pulsar-client` package is not installed. */
export class NativeClientMissingError extends BabelQueueError {}

/** Loads `pulsar-client`, or fails with an error that says how to install it (or to use the WebSocket client). */
export async function loadNativePulsar(
  load: () => Promise<unknown> = () => dynamicImport(NATIVE_PACKAGE),
): Promise<NativePulsarModule> {
  let loaded: unknown;
  try {
    loaded = await load();
  } catch (error) {
    if (isModuleNotFound(error)) {
      throw new NativeClientMissingError(
        `a pulsar:// or pulsar+ssl:// serviceUrl needs the native Pulsar client, but the package "${NATIVE_PACKAGE}" is not installed: ` +
          `run "npm install ${NATIVE_PACKAGE}", or use an http(s):// or ws(s):// serviceUrl (the broker's web service port) ` +
          'for the built-in WebSocket client',
        { cause: error },
      );
    }
    const reason = errorText(error);
    throw new BabelQueueError(
      `the package "${NATIVE_PACKAGE}" is installed but could not be loaded (is its native binary built?): ${reason}`,
      {
        cause: error,
      },
    );
  }
  return nativeModuleOf(loaded);
}

const AUTH_SHAPE =
  'auth must be { token: "<JWT>" } with a non-blank token, or { token: () => string | Promise<string> }';

function checkAuth(auth: unknown): PulsarAuthOptions | undefined {
  if (auth === undefined || auth === null) return undefined;
  const token = (auth as { token?: unknown }).token;
  if (typeof auth !== 'object') throw new BabelQueueError(AUTH_SHAPE);
  if (typeof token === 'function') return { token: token as TokenSupplier };
  if (typeof token !== 'string' || token.trim() === '') throw new BabelQueueError(AUTH_SHAPE);
  return { token };
}

/**
 * The supplier as the native client takes it: always a promise, and a clear error (without the value, which may be
 * a secret) when it returns something that is not a token.
 */
function nativeTokenSupplier(supplier: TokenSupplier): () => Promise<string> {
  return async () => {
    const token: unknown = await supplier();
    if (typeof token !== 'string' || token.trim() === '') {
      throw new BabelQueueError(
        `the auth.token supplier returned ${typeof token === 'string' ? 'a blank string' : typeof token}, not a token`,
      );
    }
    return token;
  };
}

/**
 * The settings of a client checked and resolved, before anything is loaded or created: what is wrong with them is
 * known at once (an option error at start-up), while the client itself may be created later (LazyPulsarClient).
 */
export interface PreparedClientSettings {
  kind: PulsarClientKind;
  serviceUrl: string;
  auth: PulsarAuthOptions | undefined;
  clientOptions: Record<string, unknown>;
  tls: ReturnType<typeof resolveTls>;
}

/** Checks the settings (scheme, auth, TLS) and gives the TLS warnings now; loads and creates nothing. */
export function prepareClientSettings(
  settings: PulsarClientSettings,
  dependencies: Pick<CreateClientDependencies, 'warn'> = {},
): PreparedClientSettings {
  const kind = clientKindFor(settings?.serviceUrl);
  const serviceUrl = settings.serviceUrl.trim();
  const auth = checkAuth(settings.auth);
  const clientOptions = settings.clientOptions ?? {};
  let tls: ReturnType<typeof resolveTls>;
  try {
    tls = resolveTls(clientOptions);
  } catch (error) {
    throw new BabelQueueError(`clientOptions: ${(error as Error).message}`);
  }
  // The WebSocket client's own options (time-outs, CA files, reconnect) are checked now too, as its constructor
  // checks them: a mistake there is an option error at start-up, not at the first publish.
  if (kind === 'websocket') resolveWebSocketOptions({ ...clientOptions, serviceUrl });
  const warn = dependencies.warn ?? emitWarning;
  for (const warning of tls.warnings) warn(warning);
  return { kind, serviceUrl, auth, clientOptions, tls };
}

/** The admin API's request headers for a client's credentials (a token supplier is asked each time). */
export function adminHeadersFor(auth: PulsarAuthOptions | undefined): () => Promise<Record<string, string>> {
  return async (): Promise<Record<string, string>> => {
    const token = auth && (typeof auth.token === 'function' ? await auth.token() : auth.token);
    return token ? { Authorization: `Bearer ${token}` } : {};
  };
}

/** Creates the client of prepared settings: loads `pulsar-client` for a native one. */
export async function buildPulsarClient(
  prepared: PreparedClientSettings,
  dependencies: Pick<CreateClientDependencies, 'loadNative'> = {},
): Promise<PulsarClientLike> {
  const { kind, serviceUrl, auth, clientOptions: extra, tls } = prepared;
  if (kind === 'websocket') {
    const client = new PulsarWebSocketClient({ ...extra, serviceUrl, ...(auth && { token: auth.token }) });
    rememberClientUrl(client, serviceUrl, kind);
    return client;
  }
  const native = await loadNativePulsar(dependencies.loadNative);
  const client = new native.Client({
    ...NATIVE_DEFAULTS,
    ...extra,
    // libpulsar does not check the host name unless asked: without it, any certificate of a trusted CA passes.
    tlsValidateHostname: tls.validateHostname,
    tlsAllowInsecureConnection: tls.allowInsecure,
    serviceUrl,
    ...(auth && {
      authentication: new native.AuthenticationToken({
        token: typeof auth.token === 'function' ? nativeTokenSupplier(auth.token) : auth.token,
      }),
    }),
  });
  const trustCertsFile = typeof extra.tlsTrustCertsFilePath === 'string' ? extra.tlsTrustCertsFilePath : undefined;
  rememberAdminAccess(client, serviceUrl, adminHeadersFor(auth));
  rememberServiceUrl(client, serviceUrl, {
    ...(trustCertsFile !== undefined && { trustCertsFile }),
    validateHostname: tls.validateHostname,
    allowInsecure: tls.allowInsecure,
  });
  rememberClientUrl(client, serviceUrl, kind);
  return client;
}

/** Creates the client the service URL's scheme calls for. */
export async function createPulsarClient(
  settings: PulsarClientSettings,
  dependencies: CreateClientDependencies = {},
): Promise<{ client: PulsarClientLike; kind: PulsarClientKind }> {
  const prepared = prepareClientSettings(settings, dependencies);
  return { client: await buildPulsarClient(prepared, dependencies), kind: prepared.kind };
}

import fs from 'node:fs';
import { PulsarWebSocketError } from './errors.js';
import { resolveTls, type ResolvedTls, type TlsOptions } from '../tls.js';
import { toWebSocketBases } from './handshake.js';
import type { ReconnectOptions } from './socket.js';
import { errorText } from '../../envelope/error-text.js';

export interface PulsarWebSocketClientOptions extends Pick<
  TlsOptions,
  'tlsValidateHostname' | 'tlsAllowInsecureConnection'
> {
  /**
   * Broker (or WebSocket proxy) web service URL: http://, https://, ws:// or wss://. Several brokers' web services as
   * a list, `http://a:8080,b:8080`: each socket connects to the one that last worked and, when that one is down,
   * tries the next (see docs/cluster.md).
   */
  serviceUrl: string;
  /**
   * Sent as `Authorization: Bearer <token>` on every handshake. A function is called before each handshake (the
   * first connect and every reconnect), so a rotated token is picked up without a restart.
   */
  token?: string | TokenSupplier;
  /**
   * PEM file of the CA(s) that signed the broker's certificate, for https:// and wss:// (the native client's option
   * of the same name). Without it, or `ca`, Node's default trust store applies.
   */
  tlsTrustCertsFilePath?: string;
  /** The CA certificate(s) themselves (PEM), as Node's `tls` takes them. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Handshake timeout and the cap for waits in close()/unsubscribe(), ms. Default 30000. */
  operationTimeoutMs?: number;
  /** Backoff for re-opening a dropped producer/consumer socket. */
  reconnect?: ReconnectOptions;
  /**
   * WebSocket ping interval; a socket whose pong has not come back by the next ping is reconnected, so a dead
   * or silently stalled connection is noticed within two intervals. Default 5000, 0 disables.
   */
  keepAliveIntervalMs?: number;
  /**
   * Largest frame send() will write. The broker closes the whole socket (code 1009) on a bigger frame, failing
   * every in-flight send, so such a message is rejected up front instead. Default 1048576, the broker's default
   * `webSocketMaxTextFrameSize`. The payload is base64 inside JSON, so the payload limit is about 3/4 of this.
   */
  maxFrameBytes?: number;
}

/** Returns the current token; called before each handshake. */
export type TokenSupplier = () => string | Promise<string>;

/** @internal */
export interface ResolvedOptions {
  /** The WebSocket base URLs of the web services, in the order given. */
  wsBases: string[];
  /** Which of `wsBases` the client's sockets try first: the one that last worked. Shared by all of them. */
  endpoints: { preferred: number };
  tls: ResolvedTls;
  /** The handshake headers, resolved again before each handshake (a token supplier may rotate the token). */
  headers: () => Promise<Record<string, string>>;
  ca?: string | Buffer | Array<string | Buffer>;
  operationTimeoutMs: number;
  reconnect: Required<ReconnectOptions>;
  keepAliveIntervalMs: number;
  maxFrameBytes: number;
}

function invalid(message: string): PulsarWebSocketError {
  return new PulsarWebSocketError(message, { code: 'InvalidArgument' });
}

export function checkMs(name: string, value: unknown, { allowZero = true } = {}): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw invalid(
      `${name} must be a ${allowZero ? 'non-negative' : 'positive'} number of milliseconds, got ${String(value)}`,
    );
  }
  return Math.round(value);
}

export function resolveOptions(options: PulsarWebSocketClientOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null) throw invalid('PulsarWebSocketClient options are required');
  if (typeof options.serviceUrl !== 'string') throw invalid('serviceUrl is required');
  const headers = authorizationHeaders(options.token);
  const ca = trustedCas(options);
  const initialDelayMs =
    checkMs('reconnect.initialDelayMs', options.reconnect?.initialDelayMs, { allowZero: false }) ?? 100;
  // A low cap: a returning broker is found within a few seconds; the ±20% jitter spreads the clients out.
  const maxDelayMs = checkMs('reconnect.maxDelayMs', options.reconnect?.maxDelayMs, { allowZero: false }) ?? 3000;
  const maxFrameBytes = options.maxFrameBytes ?? 1048576;
  if (!Number.isInteger(maxFrameBytes) || maxFrameBytes <= 0) throw invalid('maxFrameBytes must be a positive integer');
  return {
    wsBases: toWebSocketBases(options.serviceUrl),
    endpoints: { preferred: 0 },
    tls: checkedTls(options),
    headers,
    ...(ca !== undefined && { ca }),
    operationTimeoutMs: checkMs('operationTimeoutMs', options.operationTimeoutMs, { allowZero: false }) ?? 30000,
    reconnect: { initialDelayMs, maxDelayMs: Math.max(maxDelayMs, initialDelayMs) },
    keepAliveIntervalMs: checkMs('keepAliveIntervalMs', options.keepAliveIntervalMs) ?? 5000,
    maxFrameBytes,
  };
}

function checkedTls(options: PulsarWebSocketClientOptions): ResolvedTls {
  try {
    const { validateHostname, allowInsecure } = resolveTls(options);
    return { validateHostname, allowInsecure };
  } catch (error) {
    throw invalid((error as Error).message);
  }
}

function checkToken(token: unknown): string {
  if (typeof token !== 'string' || token.length === 0 || /[\r\n]/.test(token)) {
    // Never echo the value: it may be a secret with a typo.
    throw invalid('token must be a non-empty single-line string');
  }
  return token;
}

function authorizationHeaders(token: PulsarWebSocketClientOptions['token']): () => Promise<Record<string, string>> {
  if (token === undefined) return async () => ({});
  if (typeof token === 'function') {
    return async () => {
      let current: unknown;
      try {
        current = await token();
      } catch (error) {
        throw new PulsarWebSocketError(`the token supplier failed: ${errorText(error)}`, {
          code: 'InvalidArgument',
          cause: error,
        });
      }
      return { Authorization: `Bearer ${checkToken(current)}` };
    };
  }
  const fixed = { Authorization: `Bearer ${checkToken(token)}` };
  return async () => fixed;
}

function trustedCas(options: PulsarWebSocketClientOptions): ResolvedOptions['ca'] {
  if (options.ca !== undefined) return options.ca;
  if (options.tlsTrustCertsFilePath === undefined) return undefined;
  if (typeof options.tlsTrustCertsFilePath !== 'string' || options.tlsTrustCertsFilePath === '') {
    throw invalid('tlsTrustCertsFilePath must be the path of a PEM file');
  }
  try {
    return fs.readFileSync(options.tlsTrustCertsFilePath);
  } catch (error) {
    throw new PulsarWebSocketError(
      `cannot read tlsTrustCertsFilePath ${options.tlsTrustCertsFilePath}: ${errorText(error)}`,
      { code: 'InvalidArgument', cause: error },
    );
  }
}

/**
 * A start that failed, told in one line: which client, which URL, and the likely cause (nothing listens there, the
 * binary port under http://, TLS, authentication), instead of the raw socket error. Before subscribing, one TCP
 * connection to the service URL's first host tells at once that nothing listens there; the native client would
 * otherwise retry until its operation time-out.
 */
import net from 'node:net';
import { BabelQueueError } from '../envelope/index.js';
import { errorText } from '../envelope/error-text.js';
import type { PulsarClientKind } from './client-types.js';

const clientUrls = new WeakMap<object, { serviceUrl: string; kind: PulsarClientKind }>();

/** Records the service URL a client was created from (the library's own clients), so a failed start can name it. */
export function rememberClientUrl(client: object, serviceUrl: string, kind: PulsarClientKind): void {
  clientUrls.set(client, { serviceUrl, kind });
}

/** The service URL and kind of a client the library created (or of the native client an adapter wraps). */
export function clientUrlOf(client: unknown): { serviceUrl: string; kind: PulsarClientKind } | undefined {
  if (typeof client !== 'object' || client === null) return undefined;
  return clientUrls.get(client) ?? clientUrls.get((client as { native?: object }).native ?? {});
}

const CLIENT_LABEL: Record<PulsarClientKind, string> = {
  native: 'native pulsar-client',
  websocket: 'built-in WebSocket client',
};

/** The first host and port of a service URL, with the scheme's default port. */
export function firstHostPort(serviceUrl: string): { host: string; port: number } | undefined {
  try {
    const url = new URL(serviceUrl.trim().split(',')[0]!);
    const defaults: Record<string, number> = {
      'pulsar:': 6650,
      'pulsar+ssl:': 6651,
      'http:': 80,
      'ws:': 80,
      'https:': 443,
      'wss:': 443,
    };
    const port = url.port === '' ? defaults[url.protocol] : Number(url.port);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return port === undefined || host === '' ? undefined : { host, port };
  } catch {
    return undefined;
  }
}

/** Whether anything accepts a TCP connection at host:port: `refused` is certain, `unknown` is anything else. */
export function probeListening(
  target: { host: string; port: number },
  timeoutMs = 1_500,
): Promise<'listening' | 'refused' | 'unknown'> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: target.host, port: target.port });
    const done = (result: 'listening' | 'refused' | 'unknown') => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done('unknown'), timeoutMs);
    timer.unref();
    socket.once('connect', () => done('listening'));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED' ? 'refused' : 'unknown'));
  });
}

/** The error of a start refused because nothing listens at the service URL. */
export class NothingListensError extends BabelQueueError {
  readonly code = 'ECONNREFUSED';
}

/**
 * Rejects at once when nothing listens at the client's service URL (a client the library did not create, such as
 * the testing kit's, is not checked).
 */
export async function assertSomethingListens(client: unknown): Promise<void> {
  const known = clientUrlOf(client);
  const target = known && firstHostPort(known.serviceUrl);
  if (!target) return;
  if ((await probeListening(target)) === 'refused') {
    throw new NothingListensError(`connect ECONNREFUSED ${target.host}:${target.port}`);
  }
}

/** The likely cause of a failed start, from the error and the client kind (pure). */
export function likelyCause(
  error: unknown,
  kind: PulsarClientKind | undefined,
  serviceUrl: string | undefined,
): string | undefined {
  const text = `${errorText(error)} ${errorText((error as { cause?: unknown } | null)?.cause ?? '')}`;
  const target = serviceUrl === undefined ? undefined : firstHostPort(serviceUrl);
  const where = target ? `${target.host}:${target.port}` : 'that address';
  const status = (error as { status?: unknown } | null)?.status;
  if (/ECONNREFUSED|Connection ?refused/i.test(text))
    return (
      `nothing listens at ${where} (connection refused): is the broker running there? ` +
      (kind === 'websocket'
        ? 'http:// and ws:// go to its web service port (8080 by default)'
        : 'pulsar:// goes to its binary port (6650 by default; 6651 for pulsar+ssl://)')
    );
  if (kind === 'websocket' && /ECONNRESET|socket hang up|HPE_|Parse Error|closed during the handshake/i.test(text))
    return (
      `the server at ${where} closed the connection without an HTTP answer: is that Pulsar's binary port? The ` +
      'WebSocket client needs the web service port (8080 by default); for the binary port (6650) use pulsar://'
    );
  if (/certificate|CERT_|self[- ]signed|TLS|SSL|handshake failure|wrong version number/i.test(text))
    return 'the TLS handshake failed: check the CA (tlsTrustCertsFilePath / ca), the host name and the scheme (pulsar+ssl://, https://, wss://)';
  if (status === 401 || /Authentication|Unauthorized|\b401\b/i.test(text))
    return 'the broker refused the credentials (authentication): check the token (auth.token)';
  if (status === 403 || /AuthorizationError|NotAllowed|not authori[sz]ed|\b403\b/i.test(text))
    return "the role may not use this topic (authorization): grant it the namespace's produce/consume permissions";
  if (/TimeOut|timed out|did not complete within/i.test(text))
    return (
      'no answer in time: is the broker running and reachable at that address? With token authentication, a ' +
      'missing, wrong or expired token also ends this way'
    );
  return undefined;
}

/** One line, however many the original message had. */
const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, ' ').trim();

/**
 * The error a failed start rejects with: one line naming the client, the URL and the likely cause, then the client's
 * own reason; the original error is its `cause`.
 */
export function startupFailure(error: unknown, client: unknown, who = 'BabelPulsarServer'): BabelQueueError {
  const known = clientUrlOf(client);
  const subject = known ? ` (${known.serviceUrl}, ${CLIENT_LABEL[known.kind]})` : '';
  const cause = likelyCause(error, known?.kind, known?.serviceUrl);
  const reason = oneLine(errorText(error));
  return new BabelQueueError(
    `${who} could not start${subject}: ${cause === undefined ? reason : `${cause} (reason: ${reason})`}`,
    { cause: error },
  );
}

/**
 * Opening one WebSocket to the broker and turning every way that can fail into a PulsarWebSocketError:
 * refused/reset connections, HTTP errors on the upgrade (status + the broker's message, dug out of Jetty's
 * HTML error page) and handshake timeouts.
 */
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { describeTlsError } from '../tls.js';
import { describeCause, PulsarWebSocketError } from './errors.js';

export interface HandshakeTarget {
  url: string;
  /** Resolved before each handshake (a token supplier may rotate the token). */
  headers: () => Promise<Record<string, string>>;
  /** Trusted CA certificate(s) for wss://. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** How the broker's certificate is checked (wss://). */
  tls: { validateHostname: boolean; allowInsecure: boolean };
  timeoutMs: number;
  topic: string;
  /** Human label for messages, e.g. `producer for topic persistent://public/default/x`. */
  label: string;
}

export interface PendingWebSocket {
  /** The socket being opened; terminate() it to abort the attempt. */
  ws: WebSocket;
  /** Resolves right after `onOpen` ran (synchronously inside the 'open' event), rejects on failure. */
  done: Promise<void>;
}

const MAX_ERROR_BODY = 64 * 1024;
const BODY_READ_TIMEOUT_MS = 2000;

/**
 * Map a service URL that lists several web services, `http://a:8080,b:8080` (the native client's form) or
 * `http://a:8080,http://b:8080`, to their WebSocket base URLs; an entry without a scheme takes the first one's.
 */
export function toWebSocketBases(serviceUrl: string): string[] {
  const entries = serviceUrl.split(',').map((entry) => entry.trim());
  const scheme = /^([a-z][a-z0-9+.-]*:)\/\//i.exec(entries[0] ?? '')?.[1] ?? '';
  if (entries.length > 1 && entries.some((entry) => entry === '')) {
    throw new PulsarWebSocketError(`Invalid serviceUrl ${JSON.stringify(serviceUrl)}: an empty entry in the list`, {
      code: 'InvalidArgument',
    });
  }
  return entries.map((entry) =>
    toWebSocketBase(/^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ? entry : `${scheme}//${entry}`),
  );
}

/** Map a client service URL (http, https, ws, wss) to the WebSocket base URL, without a trailing slash. */
export function toWebSocketBase(serviceUrl: string): string {
  let url: URL;
  try {
    url = new URL(serviceUrl);
  } catch {
    throw new PulsarWebSocketError(`Invalid serviceUrl ${JSON.stringify(serviceUrl)}: not a URL`, {
      code: 'InvalidArgument',
    });
  }
  const protocols: Record<string, string> = { 'http:': 'ws:', 'ws:': 'ws:', 'https:': 'wss:', 'wss:': 'wss:' };
  const protocol = protocols[url.protocol];
  if (!protocol) {
    throw new PulsarWebSocketError(
      `Invalid serviceUrl ${JSON.stringify(serviceUrl)}: the WebSocket client needs the broker's web service URL ` +
        `(http://, https://, ws:// or wss://, usually port 8080/8443), not ${url.protocol}//`,
      { code: 'InvalidArgument' },
    );
  }
  const path = url.pathname.replace(/\/+$/, '');
  return `${protocol}//${url.host}${path}`;
}

export function decodeHtmlEntities(text: string): string {
  const named: Record<string, string> = { quot: '"', amp: '&', lt: '<', gt: '>', apos: "'", nbsp: ' ' };
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, entity: string) => {
    if (entity[0] === '#') {
      const code =
        entity[1] === 'x' || entity[1] === 'X' ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return named[entity.toLowerCase()] ?? whole;
  });
}

/**
 * The broker's error text from an upgrade error response. Pulsar's web server answers with a Jetty HTML page
 * whose <title> is `Error 409 Failed to create producer/consumer: {"errorMsg":"…","reqId":…}`; proxies may send
 * JSON or plain text instead.
 */
export function extractBrokerMessage(body: string): string {
  const title = /<title>([\s\S]*?)<\/title>/i.exec(body)?.[1];
  if (title !== undefined)
    return decodeHtmlEntities(title)
      .replace(/^\s*Error \d+\s*/, '')
      .trim();
  const trimmed = body.trim();
  try {
    const json = JSON.parse(trimmed) as Record<string, unknown>;
    for (const key of ['reason', 'errorMsg', 'message', 'error']) {
      if (typeof json[key] === 'string') return json[key] as string;
    }
  } catch {
    // not JSON
  }
  return trimmed.slice(0, 500);
}

/** Shorten `Prefix: {"errorMsg":"X",…}` to `Prefix: X`; other text is returned unchanged. */
export function summarizeBrokerMessage(text: string): string {
  const brace = text.indexOf('{');
  if (brace < 0) return text;
  const prefix = text.slice(0, brace).trim();
  const json = text.slice(brace);
  let errorMsg: string | undefined;
  try {
    const parsed = JSON.parse(json) as Record<string, unknown>;
    if (typeof parsed.errorMsg === 'string') errorMsg = parsed.errorMsg;
  } catch {
    const match = /"errorMsg"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(json);
    if (match?.[1] !== undefined) errorMsg = match[1].replace(/\\(.)/g, '$1');
  }
  if (errorMsg === undefined) return text;
  return prefix ? `${prefix} ${errorMsg}` : errorMsg;
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const charset = /charset=([^;]+)/i
      .exec(String(res.headers['content-type'] ?? ''))?.[1]
      ?.trim()
      .toLowerCase();
    const encoding: BufferEncoding = charset === 'iso-8859-1' || charset === 'latin1' ? 'latin1' : 'utf8';
    const finish = (): void => {
      clearTimeout(timer);
      res.removeAllListeners('data');
      resolve(Buffer.concat(chunks).toString(encoding));
    };
    const timer = setTimeout(finish, BODY_READ_TIMEOUT_MS);
    timer.unref();
    res.on('data', (chunk: Buffer) => {
      if (size < MAX_ERROR_BODY) {
        chunks.push(chunk);
        size += chunk.length;
      }
    });
    res.once('end', finish);
    res.once('error', finish);
    res.once('close', finish);
  });
}

/** Start opening a socket. `onOpen` runs synchronously in the 'open' event, before any message can arrive. */
export function openWebSocket(
  target: HandshakeTarget,
  headers: Record<string, string>,
  onOpen: (ws: WebSocket) => void,
): PendingWebSocket {
  const ws = new WebSocket(target.url, {
    headers,
    perMessageDeflate: false,
    followRedirects: false,
    ...(target.ca !== undefined && { ca: target.ca }),
    ...(target.tls.allowInsecure && { rejectUnauthorized: false }),
    ...(!target.tls.validateHostname && { checkServerIdentity: () => undefined }),
  });

  const done = new Promise<void>((resolve, reject) => {
    let settled = false;
    const fail = (err: PulsarWebSocketError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(err);
      ws.terminate();
    };
    const timer = setTimeout(() => {
      fail(
        new PulsarWebSocketError(
          `Could not connect ${target.label}: the WebSocket handshake with ${target.url} did not complete within ` +
            `${target.timeoutMs} ms`,
          { code: 'HandshakeTimeout', topic: target.topic },
        ),
      );
    }, target.timeoutMs);
    timer.unref();

    ws.on('error', (err: Error) => {
      fail(
        new PulsarWebSocketError(
          `Could not connect ${target.label} at ${target.url}: ${describeTlsError(err) ?? describeCause(err)}`,
          {
            code: 'ConnectError',
            topic: target.topic,
            cause: err,
          },
        ),
      );
    });
    ws.once('close', () => {
      fail(
        new PulsarWebSocketError(`Could not connect ${target.label}: the connection closed during the handshake`, {
          code: 'ConnectError',
          topic: target.topic,
        }),
      );
    });
    ws.once('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      void readBody(res).then((body) => {
        const brokerMessage = extractBrokerMessage(body);
        const summary = summarizeBrokerMessage(brokerMessage);
        fail(
          new PulsarWebSocketError(
            `Broker rejected ${target.label} at ${target.url}: HTTP ${status}${res.statusMessage ? ` ${res.statusMessage}` : ''}` +
              (summary ? ` - ${summary}` : ''),
            { code: 'HandshakeRejected', topic: target.topic, status, brokerMessage },
          ),
        );
      });
    });
    ws.once('open', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      try {
        onOpen(ws);
        resolve();
      } catch (err) {
        reject(err);
        ws.terminate();
      }
    });
  });
  return { ws, done };
}

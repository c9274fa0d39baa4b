/**
 * One logical broker connection for a producer or consumer: opens the WebSocket, keeps it alive with pings,
 * and when it drops (while not closed) reconnects with capped exponential backoff. The first connect fails
 * fast; later reconnects retry until close().
 */
import WebSocket from 'ws';
import { PulsarWebSocketError } from './errors.js';
import { openWebSocket, type HandshakeTarget } from './handshake.js';

export interface ReconnectOptions {
  /** First retry delay, ms (default 100). */
  initialDelayMs?: number;
  /** Cap for the doubling delay, ms (default 3000). */
  maxDelayMs?: number;
}

export interface ConnectionOptions extends Omit<HandshakeTarget, 'url'> {
  /** The same socket's URL on each web service given; tried from `endpoints.preferred` on. */
  urls: readonly string[];
  /** Shared by a client's sockets: the index of the URL that last worked. */
  endpoints: { preferred: number };
  reconnect: Required<ReconnectOptions>;
  /** Ping interval; a socket that misses one pong is dropped and reconnected. 0 disables. */
  keepAliveIntervalMs: number;
}

export interface ConnectionEvents {
  onMessage(text: string, generation: number): void;
  /** A socket is open (generation 1 is the first one). */
  onUp(generation: number): void;
  /** The socket of `generation` was lost while the owner was not closed; a reconnect is scheduled. */
  onDown(error: PulsarWebSocketError, generation: number): void;
}

const CLOSE_GRACE_MS = 2000;

/** Delay before reconnect attempt `attempt` (0-based): doubling from `initial`, capped at `max`, ±20% jitter. */
export function backoffDelay(
  attempt: number,
  initial: number,
  max: number,
  random: () => number = Math.random,
): number {
  const base = Math.min(max, initial * 2 ** Math.min(attempt, 30));
  const jittered = base + base * 0.2 * (random() * 2 - 1);
  return Math.max(0, Math.min(max, Math.round(jittered)));
}

export function describeClose(code: number, reason: string): string {
  const names: Record<number, string> = {
    1000: 'normal closure',
    1001: 'going away',
    1005: 'no status',
    1006: 'abnormal closure, no close frame',
    1008: 'policy violation',
    1009: 'message too big',
    1011: 'server error',
  };
  const name = names[code] ?? 'close code';
  return `${name} ${code}${reason ? `: ${reason}` : ''}`;
}

/** Whether another web service may succeed where this one failed. */
function failsOver(error: PulsarWebSocketError): boolean {
  if (error.code === 'ConnectError' || error.code === 'HandshakeTimeout') return true;
  return error.code === 'HandshakeRejected' && (error.status ?? 0) >= 500;
}

function rawToString(data: WebSocket.RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

export class Connection {
  private ws: WebSocket | undefined;
  private pending: WebSocket | undefined;
  private gen = 0;
  private closed = false;
  private closing: Promise<void> | undefined;
  private attempts = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private keepAliveTimer: NodeJS.Timeout | undefined;
  private awaitingPong = false;
  private socketError: Error | undefined;
  /** The error that caused the current outage, or the last failed reconnect. */
  lastError: PulsarWebSocketError | undefined;
  /** How many times a dropped socket was successfully replaced. */
  reconnects = 0;

  constructor(
    private readonly options: ConnectionOptions,
    private readonly events: ConnectionEvents,
  ) {}

  get generation(): number {
    return this.gen;
  }

  isOpen(): boolean {
    return !this.closed && this.ws !== undefined && this.ws.readyState === WebSocket.OPEN;
  }

  /** First connect. Rejects with the handshake/connect error; no retry. */
  async open(): Promise<void> {
    await this.attempt();
  }

  /**
   * Send a text frame. Returns false (and does nothing) when no socket is open. The frames sent in one tick (the
   * acknowledgements of the messages settled together, say) leave in one write of the TCP socket.
   */
  send(text: string, callback?: (err?: Error) => void): boolean {
    if (!this.isOpen()) return false;
    this.corkUntilNextTick();
    this.ws!.send(text, callback);
    return true;
  }

  private corked = false;

  private corkUntilNextTick(): void {
    if (this.corked) return;
    // ws keeps its TCP socket in `_socket` (not in its typings); without it frames are simply written one by one.
    const tcp = (this.ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
    if (!tcp) return;
    this.corked = true;
    tcp.cork();
    process.nextTick(() => {
      this.corked = false;
      tcp.uncork();
    });
  }

  /** Stop reconnecting and close the socket gracefully (terminated after a short grace period). Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.doClose();
    return this.closing;
  }

  private async doClose(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    this.stopKeepAlive();
    this.pending?.terminate();
    const ws = this.ws;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
      ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      ws.close(1000);
    });
  }

  /**
   * Opens the socket on the web service that last worked, else on the next ones in turn. A web service that
   * answers with a refusal (HTTP 4xx: a bad token, a missing permission) refuses on every broker alike, so that
   * ends the attempt; one that is down, times out or fails (HTTP 5xx, a broker shutting down) is passed over.
   */
  private async attempt(): Promise<void> {
    const { urls, endpoints } = this.options;
    const failures: PulsarWebSocketError[] = [];
    for (let tried = 0; tried < urls.length; tried++) {
      const index = (endpoints.preferred + tried) % urls.length;
      try {
        await this.attemptAt(urls[index]!);
        endpoints.preferred = index;
        return;
      } catch (error) {
        if (!(error instanceof PulsarWebSocketError) || !failsOver(error) || this.closed) throw error;
        failures.push(error);
      }
    }
    if (failures.length === 1) throw failures[0]!;
    throw new PulsarWebSocketError(
      `Could not connect ${this.options.label} on any of its ${urls.length} web services: ` +
        failures.map((failure) => failure.message).join('; '),
      { code: failures.at(-1)!.code, topic: this.options.topic, cause: failures.at(-1) },
    );
  }

  private async attemptAt(url: string): Promise<void> {
    const headers = await this.options.headers();
    if (this.closed) throw new PulsarWebSocketError(`${this.options.label} was closed`, { code: 'AlreadyClosed' });
    const { ws, done } = openWebSocket({ ...this.options, url }, headers, (opened) => this.attach(opened));
    this.pending = ws;
    try {
      await done;
    } finally {
      if (this.pending === ws) this.pending = undefined;
    }
  }

  private attach(ws: WebSocket): void {
    if (this.closed) {
      ws.terminate();
      return;
    }
    const generation = ++this.gen;
    this.ws = ws;
    this.attempts = 0;
    this.socketError = undefined;
    this.awaitingPong = false;
    ws.on('message', (data) => {
      if (this.ws === ws) this.events.onMessage(rawToString(data), generation);
    });
    ws.on('pong', () => {
      this.awaitingPong = false;
    });
    ws.on('error', (err: Error) => {
      this.socketError = err;
    });
    ws.once('close', (code: number, reason: Buffer) => this.handleClose(ws, generation, code, reason.toString('utf8')));
    this.startKeepAlive(ws);
    this.events.onUp(generation);
  }

  private handleClose(ws: WebSocket, generation: number, code: number, reason: string): void {
    if (this.ws !== ws) return;
    this.ws = undefined;
    this.stopKeepAlive();
    if (this.closed) return;
    const error = new PulsarWebSocketError(
      `Connection of ${this.options.label} was lost (${describeClose(code, reason)})`,
      {
        code: 'ConnectionClosed',
        topic: this.options.topic,
        closeCode: code,
        ...(reason ? { brokerMessage: reason } : {}),
        ...(this.socketError ? { cause: this.socketError } : {}),
      },
    );
    this.lastError = error;
    this.events.onDown(error, generation);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    const { initialDelayMs, maxDelayMs } = this.options.reconnect;
    const delay = backoffDelay(this.attempts++, initialDelayMs, maxDelayMs);
    // Not unref'd: a producer/consumer that is still open should keep the process alive while it reconnects,
    // like its socket did. close() clears it.
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.reconnect();
    }, delay);
  }

  private async reconnect(): Promise<void> {
    if (this.closed) return;
    try {
      await this.attempt();
      if (this.isOpen()) this.reconnects++;
    } catch (err) {
      if (this.closed) return;
      this.lastError =
        err instanceof PulsarWebSocketError
          ? err
          : new PulsarWebSocketError(String(err), { code: 'ConnectError', topic: this.options.topic, cause: err });
      this.scheduleReconnect();
    }
  }

  private startKeepAlive(ws: WebSocket): void {
    this.stopKeepAlive();
    const interval = this.options.keepAliveIntervalMs;
    if (!(interval > 0)) return;
    this.keepAliveTimer = setInterval(() => {
      if (this.ws !== ws || ws.readyState !== WebSocket.OPEN) return;
      if (this.awaitingPong) {
        this.socketError = new Error(`no pong within ${interval} ms`);
        ws.terminate();
        return;
      }
      this.awaitingPong = true;
      ws.ping();
    }, interval);
    this.keepAliveTimer.unref();
  }

  private stopKeepAlive(): void {
    if (this.keepAliveTimer) clearInterval(this.keepAliveTimer);
    this.keepAliveTimer = undefined;
  }
}

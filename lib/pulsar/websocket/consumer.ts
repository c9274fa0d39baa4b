import type { PulsarConsumer, PulsarConsumerConfig, PulsarMessage, PushResult } from '../client-types.js';
import { buildConsumerQuery, invalid } from './consumer-query.js';
import { PulsarWebSocketError } from './errors.js';
import { LateAcks } from './late-acks.js';
import { isConsumerMessageFrame, PulsarWebSocketMessage } from './message.js';
import { isWireMessageId } from './message-id.js';
import { checkMs, type ResolvedOptions } from './options.js';
import { Connection } from './socket.js';
import type { TopicName } from '../topic-name.js';
import { UnsubscribeWait } from './unsubscribe-wait.js';

export { buildConsumerQuery } from './consumer-query.js';

/** The broker caps receiverQueueSize at 1000 and treats 0 as 1 (ConsumerHandler). */
const BROKER_MAX_QUEUE = 1000;

interface Waiter {
  resolve(message: PulsarWebSocketMessage): void;
  reject(err: PulsarWebSocketError): void;
  timer: NodeJS.Timeout | undefined;
}

export interface PulsarWebSocketConsumerStats {
  /** Messages pushed by the broker and not yet handed out by receive(). */
  buffered: number;
  /** Messages handed out on the current socket and not yet acknowledged or negatively acknowledged. */
  unacked: number;
  /** buffered + unacked never exceeds this: the broker's per-socket push window. */
  bound: number;
  pendingReceives: number;
  connected: boolean;
  reconnects: number;
}

/**
 * A consumer on one WebSocket, in the broker's push mode.
 *
 * Flow control: the broker pushes at most `receiverQueueSize` (capped at 1000, 0 → 1) messages that this socket
 * has not acked or nacked, so `buffered + unacked <= bound` always holds and memory stays bounded however large the
 * backlog. Only acks/nacks for messages delivered on the current socket are sent, which keeps the broker's count
 * exact across reconnects.
 *
 * Reconnect: when the socket drops, buffered (not yet received) messages are discarded — the broker redelivers
 * every unacked message to the new socket or another consumer — and pending receive() calls keep waiting.
 * Acking a message that arrived on an old socket never throws: the ack is remembered and applied when the
 * redelivered copy shows up (which is then not handed out again). Nacking such a message is a no-op.
 */
export class PulsarWebSocketConsumer implements PulsarConsumer {
  private readonly connection: Connection;
  private readonly bound: number;
  private buffer: PulsarWebSocketMessage[] = [];
  private readonly waiters: Waiter[] = [];
  private readonly unacked = new Set<string>();
  private readonly lateAcks = new LateAcks();
  private readonly unsubscribing = new UnsubscribeWait();
  private unsubscribePromise: Promise<null> | undefined;
  private closed = false;
  private closing: Promise<null> | undefined;
  private readonly label: string;
  /** Set by pushTo(): every message goes to it as it comes, instead of waiting for a receive(). */
  private listener: ((message: PulsarWebSocketMessage) => PushResult) | null = null;
  /** A promise the listener returned: messages that come meanwhile wait in the buffer, in order. */
  private listenerBusy = false;

  /** @internal use PulsarWebSocketClient.subscribe */
  constructor(
    private readonly topic: TopicName,
    private readonly config: PulsarConsumerConfig,
    private readonly options: ResolvedOptions,
    private readonly onClosed: (consumer: PulsarWebSocketConsumer) => void,
  ) {
    if (typeof config.subscription !== 'string' || config.subscription === '') {
      throw invalid(topic.full, 'subscription must be a non-empty string');
    }
    const query = buildConsumerQuery(topic.full, config);
    const rq = config.receiverQueueSize ?? BROKER_MAX_QUEUE;
    this.bound = rq === 0 ? 1 : Math.min(rq, BROKER_MAX_QUEUE);
    this.label = `consumer (subscription "${config.subscription}") for topic ${topic.full}`;
    this.connection = new Connection(
      {
        urls: options.wsBases.map(
          (base) => `${base}/ws/v2/consumer/${topic.path}/${encodeURIComponent(config.subscription)}?${query}`,
        ),
        endpoints: options.endpoints,
        tls: options.tls,
        headers: options.headers,
        ...(options.ca !== undefined && { ca: options.ca }),
        timeoutMs: options.operationTimeoutMs,
        topic: topic.full,
        label: this.label,
        reconnect: options.reconnect,
        keepAliveIntervalMs: options.keepAliveIntervalMs,
      },
      {
        onMessage: (text, generation) => this.handleFrame(text, generation),
        onUp: () => undefined,
        onDown: (error) => this.handleDown(error),
      },
    );
  }

  /** @internal */
  async connect(): Promise<void> {
    await this.connection.open();
  }

  getTopic(): string {
    return this.topic.full;
  }

  getSubscription(): string {
    return this.config.subscription;
  }

  isConnected(): boolean {
    return !this.closed && this.connection.isOpen();
  }

  getStats(): PulsarWebSocketConsumerStats {
    return {
      buffered: this.buffer.length,
      unacked: this.unacked.size,
      bound: this.bound,
      pendingReceives: this.waiters.length,
      connected: this.isConnected(),
      reconnects: this.connection.reconnects,
    };
  }

  /**
   * Hands every message to `listener` as it comes (the library's intake): what is buffered first, then each frame as
   * it arrives. A promise the listener returns holds the next message until it settles. receive() is not used after.
   * @internal
   */
  pushTo(listener: (message: PulsarWebSocketMessage) => PushResult): void {
    this.listener = listener;
    this.pushBuffered();
  }

  /** Hands buffered messages to the listener until it asks to wait, or none is left. */
  private pushBuffered(): void {
    while (this.listener && !this.listenerBusy && !this.closed) {
      const next = this.buffer.shift();
      if (!next) return;
      this.handOver(next);
    }
  }

  private handOver(message: PulsarWebSocketMessage): void {
    this.unacked.add(message.getMessageId().toString());
    let waitFor: PushResult;
    try {
      waitFor = this.listener!(message);
    } catch {
      // The listener reports its own failures; a throw here must not stop the intake.
      waitFor = undefined;
    }
    if (!waitFor) return;
    this.listenerBusy = true;
    void waitFor
      .catch(() => undefined)
      .then(() => {
        this.listenerBusy = false;
        this.pushBuffered();
      });
  }

  /**
   * Next message. With `timeoutMs > 0` rejects with `Failed to receive message: TimeOut` (code 'TimeOut') when none
   * arrives in time; without it (or 0) waits indefinitely, also across reconnects, until close().
   */
  receive(timeoutMs?: number): Promise<PulsarWebSocketMessage> {
    if (this.closed) return Promise.reject(this.receiveClosedError());
    let timeout: number | undefined;
    try {
      timeout = checkMs('receive timeout', timeoutMs);
    } catch (err) {
      return Promise.reject(err);
    }
    const next = this.buffer.shift();
    if (next) {
      this.unacked.add(next.getMessageId().toString());
      return Promise.resolve(next);
    }
    return new Promise<PulsarWebSocketMessage>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, timer: undefined };
      if (timeout) {
        waiter.timer = setTimeout(() => {
          const index = this.waiters.indexOf(waiter);
          if (index >= 0) this.waiters.splice(index, 1);
          reject(
            new PulsarWebSocketError('Failed to receive message: TimeOut', { code: 'TimeOut', topic: this.topic.full }),
          );
        }, timeout);
        waiter.timer.unref();
      }
      this.waiters.push(waiter);
    });
  }

  acknowledge(message: PulsarMessage): Promise<null> {
    if (this.closed) {
      return Promise.reject(
        new PulsarWebSocketError(`Failed to acknowledge: ${this.label} is closed (AlreadyClosed)`, {
          code: 'AlreadyClosed',
          topic: this.topic.full,
        }),
      );
    }
    let id: string;
    try {
      id = this.messageIdOf(message);
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.unacked.delete(id)) {
      this.sendAck(id);
    } else {
      const index = this.buffer.findIndex((m) => m.getMessageId().toString() === id);
      if (index >= 0) {
        // The redelivered copy is already here but not handed out: ack it now and drop it.
        this.buffer.splice(index, 1);
        this.sendAck(id);
      } else {
        this.lateAcks.remember(id);
      }
    }
    return Promise.resolve(null);
  }

  /** Ask the broker to redeliver the message (after nAckRedeliverTimeoutMs). A no-op after close(). */
  negativeAcknowledge(message: PulsarMessage): void {
    const id = this.messageIdOf(message);
    if (this.closed) return;
    if (this.unacked.delete(id)) {
      this.connection.send(JSON.stringify({ type: 'negativeAcknowledge', messageId: id }));
    }
    // Otherwise the message belongs to a dropped socket and is redelivered anyway.
  }

  /**
   * Delete the subscription, then close the consumer. The broker refuses while other consumers are attached:
   * it drops the socket, this rejects with code 'UnsubscribeFailed' and the consumer reconnects and stays usable.
   */
  unsubscribe(): Promise<null> {
    if (this.closed) {
      return Promise.reject(
        new PulsarWebSocketError(`Failed to unsubscribe: ${this.label} is closed (AlreadyClosed)`, {
          code: 'AlreadyClosed',
          topic: this.topic.full,
        }),
      );
    }
    this.unsubscribePromise ??= this.doUnsubscribe().finally(() => {
      this.unsubscribePromise = undefined;
    });
    return this.unsubscribePromise;
  }

  close(): Promise<null> {
    this.closing ??= this.doClose();
    return this.closing;
  }

  private async doUnsubscribe(): Promise<null> {
    if (!this.connection.isOpen()) {
      const cause = this.connection.lastError;
      throw new PulsarWebSocketError(
        `Failed to unsubscribe ${this.label}: not connected${cause ? ` (${cause.message})` : ''}`,
        { code: 'ConnectionClosed', topic: this.topic.full, cause },
      );
    }
    await this.unsubscribing.wait(
      this.options.operationTimeoutMs,
      () =>
        new PulsarWebSocketError(
          `Failed to unsubscribe ${this.label}: no answer within ${this.options.operationTimeoutMs} ms`,
          { code: 'UnsubscribeFailed', topic: this.topic.full },
        ),
      () => {
        // The broker handles frames in order and answers nothing to `unsubscribe`; the isEndOfTopic answer that
        // follows proves the unsubscribe completed. On failure the broker drops the socket instead.
        this.connection.send(JSON.stringify({ type: 'unsubscribe' }));
        this.connection.send(JSON.stringify({ type: 'isEndOfTopic' }));
      },
    );
    await this.close();
    return null;
  }

  private async doClose(): Promise<null> {
    this.closed = true;
    const error = this.receiveClosedError();
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.buffer = [];
    this.unacked.clear();
    this.lateAcks.clear();
    this.unsubscribing.reject(
      () =>
        new PulsarWebSocketError(`Failed to unsubscribe: ${this.label} was closed`, {
          code: 'AlreadyClosed',
          topic: this.topic.full,
        }),
    );
    await this.connection.close();
    this.onClosed(this);
    return null;
  }

  private receiveClosedError(): PulsarWebSocketError {
    return new PulsarWebSocketError(`Failed to receive message: AlreadyClosed (${this.label} is closed)`, {
      code: 'AlreadyClosed',
      topic: this.topic.full,
    });
  }

  private messageIdOf(message: PulsarMessage): string {
    const id =
      typeof message === 'object' && message !== null && typeof message.getMessageId === 'function'
        ? String(message.getMessageId())
        : undefined;
    if (!isWireMessageId(id)) {
      throw invalid(this.topic.full, `expected a message received from this client, got ${String(message)}`);
    }
    return id;
  }

  /** Ack on the current socket; if it is going down, apply the ack to the redelivered copy instead. */
  private sendAck(id: string): void {
    if (!this.connection.send(JSON.stringify({ messageId: id }))) this.lateAcks.remember(id);
  }

  private handleFrame(text: string, generation: number): void {
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    if (isConsumerMessageFrame(frame)) {
      if (this.lateAcks.take(frame.messageId)) {
        this.connection.send(JSON.stringify({ messageId: frame.messageId }));
        return;
      }
      const message = new PulsarWebSocketMessage(frame, this.topic.full, generation);
      if (this.listener) {
        if (this.listenerBusy || this.buffer.length > 0) this.buffer.push(message);
        else this.handOver(message);
        return;
      }
      const waiter = this.waiters.shift();
      if (waiter) {
        clearTimeout(waiter.timer);
        this.unacked.add(frame.messageId);
        waiter.resolve(message);
      } else {
        this.buffer.push(message);
      }
      return;
    }
    if (typeof frame === 'object' && frame !== null && 'endOfTopic' in frame) this.unsubscribing.resolve();
  }

  private handleDown(cause: PulsarWebSocketError): void {
    this.buffer = [];
    this.unacked.clear();
    this.unsubscribing.reject(
      () =>
        new PulsarWebSocketError(
          `Failed to unsubscribe ${this.label}: the broker closed the connection (${cause.message}); ` +
            `this happens when other consumers are still connected to the subscription`,
          { code: 'UnsubscribeFailed', topic: this.topic.full, cause },
        ),
    );
  }
}

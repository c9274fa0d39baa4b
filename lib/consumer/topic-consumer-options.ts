import type { ProcessorContext, SettledEvent } from './processor-context.js';
import type { PushFeed } from './push-feed.js';

/** What one topic's intake (TopicConsumer) is made with: the processor's context, its concurrency and its feed. */
export interface TopicConsumerOptions extends Omit<
  ProcessorContext,
  'onHandlerOverdue' | 'firstReport' | 'deadlines' | 'nackCount' | 'retryInPlace'
> {
  /**
   * `'key'`: messages of one key (ordering key, else partition key) run one at a time in the order received, and a
   * failed one is retried in place, before any later message of its key; messages without a key run unordered.
   * Default `'none'`.
   */
  ordering?: 'key' | 'none';
  /** Messages handled at once; the intake is held while every slot is taken and a few more wait. */
  concurrency: number;
  /**
   * Handlers past their time-out (their messages settled, their work still running) that may be alive at once:
   * at this many no new message is taken until one ends. Default: twice `concurrency`.
   */
  maxOverdue?: number;
  /**
   * @deprecated Ignored: a consumer waits for its next message without a time-out and stops by closing (a native
   * receive with a time-out holds one of libuv's pool threads while it waits).
   */
  receiveTimeoutMs?: number;
  /**
   * Messages pushed by the client (`LibraryClient.subscribePush`). Without it the consumer takes them from
   * `consumer` with receive() without a time-out, one at a time, until it closes.
   */
  feed?: PushFeed;
  /**
   * The subscription's receiver queue: while paused, how many pushed messages are held before the client is made to
   * wait (default 1000, the native receiver queue's size), since a client that pushes asks the broker for more as
   * each push returns. It also caps the messages that wait for a slot, so a small queue keeps a slow consumer from
   * holding back more than it says.
   */
  pausedHoldLimit?: number;
  onSettled?(event: SettledEvent): void;
  onLoopError?(error: Error): void;
}

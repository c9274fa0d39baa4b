import type { PulsarMessage, PushResult } from '../pulsar/client-types.js';
import type { PushRoom } from '../pulsar/push-room.js';

export type { PushResult };

const NO_ROOM: PushRoom = { room: () => 0, roomFor: () => Promise.resolve() };

/**
 * The hand-over between a client's intake (`LibraryClient.subscribePush`) and the TopicConsumer
 * that takes them. Messages pushed before the consumer starts wait for it; after `close()` they are left
 * unacknowledged, for redelivery.
 */
export class PushFeed {
  private sink: ((message: PulsarMessage) => PushResult) | null = null;
  private roomOfSink: PushRoom = NO_ROOM;
  private attached: () => void = () => {};
  private readonly ready = new Promise<void>((resolve) => {
    this.attached = resolve;
  });

  readonly deliver = (message: PulsarMessage): PushResult =>
    this.sink ? this.sink(message) : this.ready.then(() => this.sink?.(message));

  /** What the consumer takes at once (see PushRoom); nothing before it starts, and one at a time after close. */
  readonly room: PushRoom = {
    room: () => this.roomOfSink.room(),
    roomFor: (count) => this.roomOfSink.roomFor(count),
  };

  attach(sink: (message: PulsarMessage) => PushResult, room: PushRoom = NO_ROOM): void {
    this.sink = sink;
    this.roomOfSink = room;
    this.attached();
  }

  /** Takes no more messages: what is pushed from now on stays unacknowledged and is redelivered. */
  close(): void {
    this.attach(() => undefined);
  }
}

// What a consumer that takes pushed messages says of how many it can take at once, so that a client may take
// several in one go (the native adapter's batch receive). Shared by the consumer, which answers it, and the
// native receive pump, which asks it; internal, not part of the package's surface.

export interface PushRoom {
  /** How many more messages it takes before its listener returns a promise (that one included). */
  room(): number;
  /** Resolves once room() is at least `count`, or once it takes one message at a time (paused, stopping). */
  roomFor(count: number): Promise<void>;
}

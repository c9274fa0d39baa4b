import type { SettledEvent } from '../../consumer/index.js';

/** Events of `server.on(...)`. */
export type BabelServerEvents = {
  /** Every delivery once settled: acknowledged, retried, dead-lettered, negatively acknowledged, dropped. */
  settled: (event: SettledEvent) => void;
  /** An error outside any one message (a failing receive, a consumer that cannot reconnect). */
  error: (error: Error) => void;
};

// The time-out of a publish: past `timeoutMs` without the broker's answer, the publish rejects with a PublishError
// that says what to check. Kept apart from BabelPulsarClient, which only says what the broker side of a publish is.
import { BabelQueueError } from '../../envelope/index.js';
import type { ClientEvents } from './client-events.js';
import { PublishError } from './publish-error.js';

/** One publish under a time-out, and what its failure needs of the client. */
export interface TimedPublish {
  readonly topic: string;
  /** The envelope's `meta.id`, carried by the PublishError (a retry with `{ id }` cannot create a second message). */
  readonly id: string;
  /** How long to wait for the broker; 0 waits as long as it takes. */
  readonly timeoutMs: number;
  /** The client's options: their `serviceUrl`, read when the time-out fires, is named in the error. */
  readonly clientOptions: { readonly serviceUrl?: string | undefined };
  /** The client's events: the time-out's PublishError is raised on its `error` event. */
  readonly events: Pick<ClientEvents, 'raise'>;
}

/** Runs the broker side of a publish; past `timeoutMs` it rejects with a PublishError saying what to check. */
export async function withinPublishTimeout(publish: TimedPublish, work: () => Promise<void>): Promise<void> {
  const { topic, id, timeoutMs, clientOptions } = publish;
  if (timeoutMs === 0) return work();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const where = clientOptions.serviceUrl === undefined ? '' : ` at ${clientOptions.serviceUrl}`;
      const cause = new BabelQueueError(
        `publish to ${topic} got no answer from the broker within ${timeoutMs} ms (TimeOut): is the broker running ` +
          `and reachable${where}, may this client produce to the topic, and does its namespace exist? ` +
          '(publishTimeoutMs / publish(..., { timeoutMs }) sets the wait)',
      );
      const failure = new PublishError(cause, id, topic);
      publish.events.raise(failure);
      reject(failure);
    }, timeoutMs);
    timer.unref?.();
  });
  const running = work();
  running.catch(() => undefined); // a late failure after the time-out was already reported
  try {
    await Promise.race([running, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

import { BabelQueueError } from '../../envelope/index.js';
import type { ScheduledMessage, ScheduleHandle, ScheduleListQuery, ScheduleOptions } from '../../schedule/index.js';
import type { UrnContract } from '../../schema/urn-contract.js';

/**
 * What a client schedules through: the module's outbox with stored schedules, each call in a statement of its own
 * on the outbox's pool. The client cannot build it (the outbox sits above it), so the module attaches it.
 */
export interface ClientSchedules {
  schedule(urn: string | UrnContract<object>, data: object, options: ScheduleOptions): Promise<ScheduleHandle>;
  cancel(id: string): Promise<boolean>;
  get(id: string): Promise<ScheduledMessage | null>;
  list(query?: ScheduleListQuery): Promise<ScheduledMessage[]>;
}

const attached = new WeakMap<object, ClientSchedules>();

/** Gives a client its schedules (the module does, when its outbox has `schedules` on). */
export function attachClientSchedules(client: object, schedules: ClientSchedules): void {
  attached.set(client, schedules);
}

/** The client's schedules, or the error that says how to configure them. */
export function clientSchedules(client: object, what: string): ClientSchedules {
  const schedules = attached.get(client);
  if (schedules === undefined) {
    throw new BabelQueueError(
      `BabelPulsarClient.${what} needs stored schedules: BabelQueueModule.forRoot({ outbox: { pool, schedules: true } }) ` +
        '(docs/scheduling.md). A client made with new BabelPulsarClient(...) has none: use BabelOutbox.schedule()',
    );
  }
  return schedules;
}

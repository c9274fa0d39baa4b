import type { PulsarClientKind } from '../../pulsar/client-factory.js';
import type { PulsarClientLike } from '../../pulsar/client-types.js';

/** DI token of the validated module options (ResolvedModuleOptions). */
export const BABEL_QUEUE_RESOLVED_OPTIONS = Symbol('BABEL_QUEUE_RESOLVED_OPTIONS');

/** DI token of the module's client handle: the Pulsar client, which kind it is and whether the module owns it. */
export const BABEL_QUEUE_CLIENT_HANDLE = Symbol('BABEL_QUEUE_CLIENT_HANDLE');

export interface ClientHandle {
  client: PulsarClientLike;
  /** `provided` when the options gave a ready client. */
  kind: PulsarClientKind | 'provided';
  /** True when the module created the client (and so closes it on shutdown). */
  owned: boolean;
  /** Set once the module closed the client. */
  closed: boolean;
}

/**
 * DI token of the schedules the testing kit stands in for stored ones (`useInMemoryPulsar` with an InMemoryPulsar):
 * null in an app, where the client schedules through the outbox.
 */
export const BABEL_QUEUE_KIT_SCHEDULES = Symbol('BABEL_QUEUE_KIT_SCHEDULES');

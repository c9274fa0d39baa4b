/**
 * The module's client when a pulsar:// service URL needs `pulsar-client` and it is not installed. Creating the
 * module does not fail: a test module that overrides the client, or one that never listens or publishes, compiles
 * without it. The first subscription or publish fails instead, with the error that says what to install.
 */
import type { PulsarClientLike, PulsarConsumer, PulsarProducer } from '../client-types.js';

export class UnavailableNativeClient implements PulsarClientLike {
  constructor(
    /** Why the native client is not there (a NativeClientMissingError). */
    readonly reason: Error,
  ) {}

  createProducer(): Promise<PulsarProducer> {
    return Promise.reject(this.reason);
  }

  subscribe(): Promise<PulsarConsumer> {
    return Promise.reject(this.reason);
  }

  close(): Promise<null> {
    return Promise.resolve(null);
  }
}

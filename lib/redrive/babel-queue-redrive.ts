import { Inject, Injectable } from '@nestjs/common';
import { createPulsarClient, type PulsarClientSettings } from '../pulsar/client-factory.js';
import type { PulsarClientLike } from '../pulsar/client-types.js';
import { BABEL_PULSAR_CLIENT } from '../nest/constants.js';
import {
  deadLetterStats,
  listDeadLetters,
  purgeDeadLetters,
  type BrowseOptions,
  type DeadLetterListing,
  type DeadLetterStats,
  type PurgeOptions,
  type PurgeResult,
} from './browse.js';
import { redrive } from './redrive.js';
import type { RedriveOptions, RedriveResult } from './types.js';

/**
 * Operates dead-letter topics over a Pulsar client (native or WebSocket): redrive, list, stats and purge. Injected
 * by BabelQueueModule with the module's client, or built standalone: `new BabelQueueRedrive(client)` or
 * `await BabelQueueRedrive.connect(...)`.
 */
@Injectable()
export class BabelQueueRedrive {
  constructor(@Inject(BABEL_PULSAR_CLIENT) private readonly client: PulsarClientLike) {}

  /** A redrive over its own client; call `close()` when done. */
  static async connect(settings: PulsarClientSettings): Promise<BabelQueueRedrive & { close(): Promise<void> }> {
    const { client } = await createPulsarClient(settings);
    const service = new BabelQueueRedrive(client) as BabelQueueRedrive & { close(): Promise<void> };
    service.close = async () => {
      await client.close();
    };
    return service;
  }

  run(options: RedriveOptions): Promise<RedriveResult> {
    return redrive(this.client, options);
  }

  /** The selected records, read without changing anything. */
  list(options: BrowseOptions): Promise<DeadLetterListing> {
    return listDeadLetters(this.client, options);
  }

  /** Counts by URN and reason of the selected records. */
  stats(options: BrowseOptions): Promise<DeadLetterStats> {
    return deadLetterStats(this.client, options);
  }

  /** Removes the selected records; a dry run unless `yes: true`. */
  purge(options: PurgeOptions): Promise<PurgeResult> {
    return purgeDeadLetters(this.client, options);
  }
}

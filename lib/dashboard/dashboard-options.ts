import type { CanActivate, ModuleMetadata, Type } from '@nestjs/common';
import { BabelQueueError } from '../envelope/index.js';
import type { PulsarClientLike } from '../pulsar/client-types.js';

export interface BabelQueueDashboardOptions {
  /** The dead-letter topics the page shows, e.g. `['orders.dlq']`; only these can be read or changed. */
  topics: readonly string[];
  /** Where the page is served (default `babelqueue`: `GET /babelqueue`). */
  path?: string;
  /**
   * Who may use the page: a Nest guard (class or instance) run on every request. Required, unless `private` says
   * the app is reachable only by its operators.
   */
  guard?: Type<CanActivate> | CanActivate;
  /** Modules whose providers the guard class injects (e.g. the app's auth module). */
  imports?: ModuleMetadata['imports'];
  /** Serve the page without a guard: say so only for an app nobody else can reach. */
  private?: boolean;
  /** The Pulsar client (default: the one BabelQueueModule provides, found anywhere in the app). */
  client?: PulsarClientLike;
  /** The DLQ subscription the page reads through (default `babelqueue-redrive`, the CLI's). */
  subscription?: string;
  /** How long an empty DLQ is waited on before a read ends, ms (default 500). */
  idleTimeoutMs?: number;
}

/** Throws when the dashboard would be open to anyone, or has nothing to show. */
export function checkDashboardOptions(options: BabelQueueDashboardOptions): void {
  if (!options || !Array.isArray(options.topics) || options.topics.length === 0)
    throw new BabelQueueError(
      "BabelQueueDashboardModule needs the dead-letter topics to show: { topics: ['orders.dlq'] }",
    );
  if (!options.guard && options.private !== true)
    throw new BabelQueueError(
      'BabelQueueDashboardModule refuses to start without a guard: it can redrive and purge dead letters. ' +
        'Pass { guard: YourAuthGuard }, or { private: true } when only operators can reach this app.',
    );
  if (options.path !== undefined && !/^[A-Za-z0-9/_-]*$/.test(options.path))
    throw new BabelQueueError(`BabelQueueDashboardModule path ${JSON.stringify(options.path)} is not a URL path`);
}

import type { CanActivate, ModuleMetadata, Type } from '@nestjs/common';
import { BabelQueueError } from '../envelope/index.js';
import type { PulsarClientLike } from '../pulsar/client-types.js';
import { deadLetterTopicName } from '../redrive/topic-name.js';
import { errorText } from '../envelope/error-text.js';
import type { DashboardSchedulesOptions } from './dashboard-schedules.js';
import type { DashboardAdminOptions } from './dashboard-subscriptions.js';

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
  /**
   * At most this many records are read from a topic per request (default 1000): the page shows, counts and acts on
   * the oldest ones, so a flooded DLQ costs bounded memory and holds the subscription briefly. Redrive or purge
   * them, or use the command, to reach the rest.
   */
  maxRead?: number;
  /** Records per page of the list (default 100, at most `maxRead`). */
  pageSize?: number;
  /**
   * The topics a redrive from the page may write to (short or full names); by default only `<topic>` for
   * `<topic>.dlq`. A record naming another is refused and shown so in the dry run.
   */
  redriveTargets?: readonly string[];
  /**
   * Who may frame the page: the CSP `frame-ancestors` sources (default `'none'`, with `X-Frame-Options: DENY`),
   * e.g. `'self'` for an operators' portal of the same origin.
   */
  frameAncestors?: string;
  /**
   * Also list the upcoming stored schedules (docs/scheduling.md), read-only, behind the same guard:
   * `{ pool, table?, limit? }` with the outbox's pool.
   */
  schedules?: DashboardSchedulesOptions;
  /**
   * The broker's admin API, for the backlog and lag of the app's subscriptions: `{ adminUrl, token? }` (default:
   * the one of the app's client, with its credentials).
   */
  admin?: DashboardAdminOptions;
}

export const DEFAULT_MAX_READ = 1000;
export const DEFAULT_PAGE_SIZE = 100;

const wholeAtLeastOne = (value: unknown): boolean => Number.isInteger(value) && (value as number) >= 1;

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
  for (const name of ['maxRead', 'pageSize'] as const) {
    if (options[name] !== undefined && !wholeAtLeastOne(options[name]))
      throw new BabelQueueError(`BabelQueueDashboardModule ${name} must be a whole number of 1 or more`);
  }
  if (options.frameAncestors !== undefined && !/^[\x21-\x2b\x2d-\x3a\x3c-\x7e ]+$/.test(options.frameAncestors))
    throw new BabelQueueError(
      "BabelQueueDashboardModule frameAncestors is a list of CSP sources such as \"'self'\" (no ';' or ',')",
    );
  if (
    options.redriveTargets !== undefined &&
    (!Array.isArray(options.redriveTargets) ||
      !options.redriveTargets.every((name) => typeof name === 'string' && name.trim() !== ''))
  )
    throw new BabelQueueError('BabelQueueDashboardModule redriveTargets must be topic names');
  for (const name of options.redriveTargets ?? []) {
    try {
      deadLetterTopicName(name);
    } catch (error) {
      throw new BabelQueueError(`BabelQueueDashboardModule redriveTargets: ${errorText(error)}`);
    }
  }
  if (
    options.admin !== undefined &&
    (typeof options.admin !== 'object' ||
      options.admin === null ||
      typeof options.admin.adminUrl !== 'string' ||
      !URL.canParse(options.admin.adminUrl) ||
      (options.admin.token !== undefined && (typeof options.admin.token !== 'string' || options.admin.token === '')))
  )
    throw new BabelQueueError("BabelQueueDashboardModule admin is { adminUrl: 'http://broker:8080', token? }");
  if (options.path !== undefined && !/^[A-Za-z0-9/_-]*$/.test(options.path))
    throw new BabelQueueError(`BabelQueueDashboardModule path ${JSON.stringify(options.path)} is not a URL path`);
}

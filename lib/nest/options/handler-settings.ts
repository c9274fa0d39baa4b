/**
 * Handler settings given at run time (docs/configuration.md#handler-settings-from-configuration): a server's
 * `handlers` option, keyed by URN or by `Controller.method`, overrides what `@BabelHandler` declared for a handler's
 * topic, subscription, subscription type, attempts, retry policy, concurrency, unknownUrn, ordering, onExhausted
 * and inbox. Pure, but for the book that remembers which keys were used.
 */
import type { RetryPolicy } from '../../consumer/index.js';
import type { CircuitBreakerOptions } from '../../consumer/circuit-breaker.js';
import type { UnknownUrnStrategy } from '../../consumer/unknown-urn.js';
import {
  checkKnownKeys,
  isPlainObject,
  resolveOptions,
  type RaiseOptionError,
  type ResolvedOptions,
} from '../../options/option-table.js';
import type { SubscriptionType } from '../../pulsar/client-types.js';
import { sharedRows } from './shared-rows.js';
import type { OnExhausted, Ordering } from './ordering-option.js';

/** What one entry of `handlers` may set; each absent key keeps the decorator's value (else the server's). */
export const handlerSettingsTable = {
  /** The topic the handler consumes (short or full name). */
  topic: sharedRows.topic(),
  /** The subscription the handler consumes through. */
  subscription: sharedRows.subscription(),
  /** The type of that subscription (every handler of one subscription must agree). */
  subscriptionType: sharedRows.subscriptionType(),
  /** Attempts before the dead-letter topic. */
  maxAttempts: sharedRows.maxAttempts(),
  /** Delays between attempts. */
  retryPolicy: sharedRows.retryPolicy(),
  /** Messages handled at once on the handler's subscription (every handler of one subscription must agree). */
  concurrency: sharedRows.concurrency(),
  /** What the handler's subscription does with a URN none of its handlers takes (they must agree). */
  unknownUrn: sharedRows.unknownUrn(),
  /** Per-key order with retries in place, or none (every handler of one subscription must agree). */
  ordering: sharedRows.ordering(),
  /** With ordering 'key': dead-letter a message failed for good, or block its key (every handler of one subscription must agree). */
  onExhausted: sharedRows.onExhausted(),
  /** Runs in the server's inbox (docs/exactly-once.md#the-inbox), or not. */
  inbox: sharedRows.inbox(),
  /** The circuit breaker of the handler's subscription (they must agree). */
  circuitBreaker: sharedRows.circuitBreaker(),
  /** Handler calls started per second at most on the handler's subscription, per instance (they must agree). */
  maxPerSecond: sharedRows.maxPerSecond(),
};

export type HandlerSettingName = keyof typeof handlerSettingsTable;
export const HANDLER_SETTING_NAMES = Object.keys(handlerSettingsTable) as HandlerSettingName[];

/** One entry of `handlers`. */
export type HandlerSettings = {
  topic?: string;
  subscription?: string;
  subscriptionType?: SubscriptionType;
  maxAttempts?: number;
  retryPolicy?: RetryPolicy;
  concurrency?: number;
  unknownUrn?: UnknownUrnStrategy;
  ordering?: Ordering;
  onExhausted?: OnExhausted;
  inbox?: boolean;
  circuitBreaker?: boolean | Partial<CircuitBreakerOptions>;
  maxPerSecond?: number;
};

/** `handlers`: entries keyed by a URN (`urn:…`) or by `Controller.method`. */
export type HandlerSettingsMap = Record<string, HandlerSettings>;

/** One entry of `handlers` as checked: a breaker given as `true` or in part is complete. */
export type ResolvedHandlerSettingsEntry = Omit<HandlerSettings, 'circuitBreaker'> & {
  circuitBreaker?: CircuitBreakerOptions;
};

/** `handlers` as checked. */
export type ResolvedHandlerSettingsMap = Record<string, ResolvedHandlerSettingsEntry>;

/** Validates the `handlers` option: each key and each entry (unknown settings refused, listing those allowed). */
export function checkHandlerSettingsMap(
  value: unknown,
  name: string,
  raise: RaiseOptionError,
): ResolvedHandlerSettingsMap | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value))
    return raise(`${name} must be an object keyed by URN or Controller.method, e.g. { "urn:…": { topic } }`, 'type');
  const checked: ResolvedHandlerSettingsMap = {};
  for (const [key, entry] of Object.entries(value)) {
    const where = `${name}[${JSON.stringify(key)}]`;
    if (key.trim() === '') raise(`${name} has a blank key: name a URN or Controller.method`, 'type');
    if (!isPlainObject(entry)) return raise(`${where} must be an object of handler settings`, 'type');
    checkKnownKeys(entry, HANDLER_SETTING_NAMES, where, raise);
    const resolved: ResolvedOptions<typeof handlerSettingsTable> = resolveOptions(
      handlerSettingsTable,
      entry,
      where,
      raise,
    );
    const kept: Record<string, unknown> = {};
    for (const setting of HANDLER_SETTING_NAMES) if (resolved[setting] !== undefined) kept[setting] = resolved[setting];
    Object.defineProperty(checked, key, { value: kept, enumerable: true, writable: true, configurable: true });
  }
  return checked;
}

/** Where a handler's setting came from, for the start-up line. */
export type SettingSource = { from: 'handlers'; key: string } | { from: 'decorator' } | { from: 'server' };

/** A handler's settings with the run-time entries applied, and where each came from. */
export interface AppliedSettings {
  settings: ResolvedHandlerSettingsEntry;
  sources: Record<HandlerSettingName, SettingSource>;
}

/** The keys of `handlers` that may name a handler, the first that gives a setting winning. */
export function keysOf(urn: string, handlerName: string, settingsKey?: string): string[] {
  return [...(settingsKey === undefined ? [] : [settingsKey]), handlerName, urn];
}

/**
 * The settings of one handler: the entry of the decorator's `settingsKey`, then the one keyed by
 * `Controller.method`, then the one keyed by its URN, then the decorator; a setting none gives is the server's.
 */
export function applyHandlerSettings(
  map: ResolvedHandlerSettingsMap | undefined,
  urn: string,
  handlerName: string,
  declared: ResolvedHandlerSettingsEntry,
  settingsKey?: string,
): AppliedSettings {
  const settings: Record<string, unknown> = {};
  const sources = {} as Record<HandlerSettingName, SettingSource>;
  const entries = keysOf(urn, handlerName, settingsKey).map((key) => [key, map?.[key]] as const);
  for (const setting of HANDLER_SETTING_NAMES) {
    const found = entries.find(([, entry]) => entry?.[setting] !== undefined);
    const [value, source]: [unknown, SettingSource] = found
      ? [found[1]![setting], { from: 'handlers', key: found[0] }]
      : declared[setting] !== undefined
        ? [declared[setting], { from: 'decorator' }]
        : [undefined, { from: 'server' }];
    if (value !== undefined) settings[setting] = value;
    sources[setting] = source;
  }
  return { settings: settings as ResolvedHandlerSettingsEntry, sources };
}

/** The server's values of the settings, for a start-up line of a setting no handler gave. */
export type ServerDefaults = Record<HandlerSettingName, unknown>;

/**
 * The server's values of the settings (topics, subscription, type, attempts, policy, concurrency, unknownUrn,
 * ordering, inbox).
 */
export function serverDefaultsOf(settings: {
  topics: readonly string[];
  subscription: string;
  subscriptionType: SubscriptionType;
  maxAttempts: number;
  retryPolicy?: RetryPolicy | undefined;
  concurrency: number;
  unknownUrn: UnknownUrnStrategy;
  ordering: Ordering;
  onExhausted: OnExhausted;
  inbox?: { every?: boolean } | undefined;
  circuitBreaker?: CircuitBreakerOptions | undefined;
  maxPerSecond?: number | undefined;
}): ServerDefaults {
  const { topics, subscription, subscriptionType, maxAttempts, retryPolicy, concurrency, unknownUrn } = settings;
  const inbox = settings.inbox?.every ?? false;
  return {
    topic: topics.join(', '),
    subscription,
    subscriptionType,
    maxAttempts,
    retryPolicy,
    concurrency,
    unknownUrn,
    ordering: settings.ordering,
    onExhausted: settings.onExhausted,
    inbox,
    circuitBreaker: settings.circuitBreaker,
    maxPerSecond: settings.maxPerSecond,
  };
}

/** Settings that are off unless some level gives them: the line names them only when one does. */
const OFF_UNLESS_GIVEN = new Set<HandlerSettingName>(['circuitBreaker', 'maxPerSecond']);
/** Settings whose server default is the behaviour without them: the line names them only when it differs. */
const QUIET_DEFAULTS: Partial<Record<HandlerSettingName, unknown>> = { onExhausted: 'dead-letter' };

/**
 * The start-up line of a handler whose settings came (in part) from `handlers`, e.g.
 * `OrdersController.created (urn:shop:orders:created): topic "orders-staging" from handlers["urn:shop:orders:created"],
 * subscription "babelqueue" from the server, maxAttempts 5 from handlers["OrdersController.created"], …`
 */
export function settingsLine(
  handlerName: string,
  urn: string,
  applied: AppliedSettings,
  defaults: ServerDefaults,
  prefix: string,
): string {
  const parts = HANDLER_SETTING_NAMES.flatMap((setting) => {
    const source = applied.sources[setting];
    const value = source.from === 'server' ? defaults[setting] : applied.settings[setting];
    if (value === undefined && OFF_UNLESS_GIVEN.has(setting)) return [];
    if (source.from === 'server' && setting in QUIET_DEFAULTS && QUIET_DEFAULTS[setting] === value) return [];
    const shown = value === undefined ? 'none' : JSON.stringify(value);
    const where =
      source.from === 'handlers'
        ? `${prefix}[${JSON.stringify(source.key)}]`
        : source.from === 'decorator'
          ? '@BabelHandler'
          : 'the server';
    return `${setting} ${shown} from ${where}`;
  });
  return `handler settings of ${handlerName} (${urn}): ${parts.join(', ')}`;
}

/** Remembers which keys of `handlers` named a handler, so that one naming none fails the start. */
export class HandlerSettingsBook {
  private readonly used = new Set<string>();
  readonly lines: string[] = [];

  constructor(
    readonly map: ResolvedHandlerSettingsMap | undefined,
    private readonly prefix: string,
  ) {}

  get active(): boolean {
    return this.map !== undefined && Object.keys(this.map).length > 0;
  }

  /** Applies the entries of one handler and keeps its start-up line. */
  apply(
    urn: string,
    handlerName: string,
    declared: ResolvedHandlerSettingsEntry & { settingsKey?: string },
    defaults: ServerDefaults,
  ): ResolvedHandlerSettingsEntry {
    if (!this.active) return declared;
    const { settingsKey } = declared;
    for (const key of keysOf(urn, handlerName, settingsKey)) if (this.map![key] !== undefined) this.used.add(key);
    const applied = applyHandlerSettings(this.map, urn, handlerName, declared, settingsKey);
    this.lines.push(settingsLine(handlerName, urn, applied, defaults, this.prefix));
    return applied.settings;
  }

  /** The keys that named no handler of this server (a start-up error). */
  unknownKeys(): string[] {
    return Object.keys(this.map ?? {}).filter((key) => !this.used.has(key));
  }

  /** Throws when a key named no handler, listing the handlers there are. */
  check(known: readonly string[]): void {
    const unknown = this.unknownKeys();
    if (unknown.length === 0) return;
    throw new TypeError(
      `${this.prefix} names no handler of this server: ${unknown.map((key) => JSON.stringify(key)).join(', ')} ` +
        '(a key is a URN, a Controller.method or a @BabelHandler settingsKey of a handler this server runs; known: ' +
        `${known.join(', ') || 'none'})`,
    );
  }
}

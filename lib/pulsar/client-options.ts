import { raiseStandardError, type RaiseOptionError } from '../options/option-table.js';
/**
 * Pulsar's own consumer and producer settings, passed through to the client: which ones the library accepts, how
 * each is checked, and what each client does with it (docs/pulsar-features.md#client-options). One table per kind
 * drives the validation, the WebSocket query parameters and the refusals, so the three cannot drift apart.
 *
 * Settings the library itself needs (topic, subscription, subscription type, listener, dead-letter policy, the
 * hashing scheme and batching type that keep a key on one partition whichever client publishes it) are not
 * passed through: each has a library option of its own, named in the error.
 */
import { describeValue } from '../describe-value.js';

export type PulsarCompressionType = 'None' | 'Zlib' | 'LZ4' | 'ZSTD' | 'SNAPPY';
export type PulsarRoutingMode = 'RoundRobinDistribution' | 'UseSinglePartition';
export type PulsarProducerAccessMode = 'Shared' | 'Exclusive' | 'WaitForExclusive' | 'ExclusiveWithFencing';

export interface PulsarKeySharedPolicy {
  keyShareMode?: 'AutoSplit' | 'Sticky';
  allowOutOfOrderDelivery?: boolean;
  /** With `keyShareMode: 'Sticky'`: the hash ranges (0..65535) this consumer owns. */
  stickyRanges?: Array<{ start: number; end: number }>;
}

/** Consumer settings passed to the Pulsar client (module-wide, per server, per `@BabelHandler`). */
export interface PulsarConsumerOptions {
  /** Redeliver a message not acknowledged within this time: 0 (off, default) or >= 10000 ms. */
  ackTimeoutMs?: number;
  /** Messages the client prefetches (the WebSocket API caps it at 1000). */
  receiverQueueSize?: number;
  /** Prefetch limit across all partitions of a partitioned topic. Native client only. */
  receiverQueueSizeAcrossPartitions?: number;
  /** Shown in the broker's topic stats, to tell instances apart. */
  consumerName?: string;
  /** Shared subscription: consumers of a lower level get messages first (0 is the highest). WebSocket client only. */
  priorityLevel?: number;
  /** How a KeyShared subscription spreads keys. Native client only. */
  keySharedPolicy?: PulsarKeySharedPolicy;
  /** Replicate the subscription's position to other clusters (geo-replication). Native client only. */
  replicateSubscriptionState?: boolean;
  /** Read a compacted topic's latest value per key. Native client only. */
  readCompacted?: boolean;
  /** Acknowledge single messages of a batch on the broker. Native client only. */
  batchIndexAckEnabled?: boolean;
  /** Chunked messages assembled at once before the oldest is dropped. Native client only. */
  maxPendingChunkedMessage?: number;
  /** Consumer metadata, shown in the broker's stats. Native client only. */
  properties?: Record<string, string>;
}

/** Producer settings passed to the Pulsar client (module-wide, per topic, per server). */
export interface PulsarProducerOptions {
  compressionType?: PulsarCompressionType;
  /**
   * Default false on both clients: each message is its own entry, which the broker dispatches, acknowledges and
   * redelivers on its own. True batches (one key per batch on native, for Key_Shared).
   */
  batchingEnabled?: boolean;
  batchingMaxMessages?: number;
  batchingMaxPublishDelayMs?: number;
  /** Native client only. */
  batchingMaxAllowedSizeInBytes?: number;
  /**
   * Split a message above the broker's `maxMessageSize` into chunks (turns batching off, which chunking needs).
   * Native client only: a WebSocket frame is capped by the broker's `webSocketMaxTextFrameSize` anyway.
   */
  chunkingEnabled?: boolean;
  sendTimeoutMs?: number;
  maxPendingMessages?: number;
  /** Native client only. */
  maxPendingMessagesAcrossPartitions?: number;
  /** Wait instead of failing when maxPendingMessages are in flight. Native client only. */
  blockIfQueueFull?: boolean;
  /** Where a message without a key goes on a partitioned topic. Default round robin on both clients. */
  messageRoutingMode?: PulsarRoutingMode;
  /** Must be unique per topic: two producers with one name on a topic are refused by the broker. */
  producerName?: string;
  initialSequenceId?: number;
  /** Native client only. */
  accessMode?: PulsarProducerAccessMode;
  /** Producer metadata, shown in the broker's stats. Native client only. */
  properties?: Record<string, string>;
}

export type PulsarOptionsKind = 'consumer' | 'producer';
export type PulsarClientName = 'native' | 'websocket';

/** How one pass-through option is checked and what each client does with it. */
export interface OptionSpec {
  /** Throws a message (without the option's name) when the value is not allowed; undefined never reaches it. */
  check: (value: unknown) => string | undefined;
  /** The broker's WebSocket query parameter, or false when the WebSocket API has none. */
  websocket: string | false;
  /** The value as the WebSocket query parameter takes it. */
  wire?: (value: unknown) => string;
  /** False when the native client's Node binding has no such setting. */
  native: boolean;
}

const integer =
  (min: number) =>
  (value: unknown): string | undefined =>
    Number.isInteger(value) && (value as number) >= min
      ? undefined
      : `must be an integer >= ${min}, got ${describeValue(value)}`;
const boolean = (value: unknown): string | undefined =>
  typeof value === 'boolean' ? undefined : `must be true or false, got ${describeValue(value)}`;
const nonBlank = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== ''
    ? undefined
    : `must be a non-blank string, got ${describeValue(value)}`;
const oneOf =
  (allowed: readonly string[]) =>
  (value: unknown): string | undefined =>
    typeof value === 'string' && allowed.includes(value)
      ? undefined
      : `must be one of ${allowed.join(', ')}, got ${describeValue(value)}`;
const stringMap = (value: unknown): string | undefined =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.values(value).every((entry) => typeof entry === 'string')
    ? undefined
    : `must be an object of string values, got ${describeValue(value)}`;

function ackTimeout(value: unknown): string | undefined {
  // The native client refuses 1..9999 (its minimum is 10 s); the same rule on both keeps them alike.
  return Number.isInteger(value) && ((value as number) === 0 || (value as number) >= 10_000)
    ? undefined
    : `must be 0 (off) or a whole number of ms >= 10000, got ${describeValue(value)}`;
}

function keySharedPolicy(value: unknown): string | undefined {
  const shape = 'must be { keyShareMode?: AutoSplit | Sticky, allowOutOfOrderDelivery?: boolean, stickyRanges? }';
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `${shape}, got ${describeValue(value)}`;
  const policy = value as Record<string, unknown>;
  for (const key of Object.keys(policy)) {
    if (!['keyShareMode', 'allowOutOfOrderDelivery', 'stickyRanges'].includes(key))
      return `${shape}; ${key} is not one`;
  }
  if (policy.keyShareMode !== undefined && !['AutoSplit', 'Sticky'].includes(policy.keyShareMode as string))
    return `.keyShareMode must be AutoSplit or Sticky, got ${describeValue(policy.keyShareMode)}`;
  if (policy.allowOutOfOrderDelivery !== undefined && typeof policy.allowOutOfOrderDelivery !== 'boolean')
    return `.allowOutOfOrderDelivery must be true or false, got ${describeValue(policy.allowOutOfOrderDelivery)}`;
  const ranges = policy.stickyRanges;
  if (ranges === undefined) return undefined;
  const valid =
    Array.isArray(ranges) &&
    ranges.every((range: unknown) => {
      const { start, end } = (range ?? {}) as { start?: unknown; end?: unknown };
      return (
        Number.isInteger(start) &&
        Number.isInteger(end) &&
        (start as number) >= 0 &&
        (start as number) <= (end as number) &&
        (end as number) <= 65535
      );
    });
  return valid ? undefined : '.stickyRanges must be a list of { start, end } with 0 <= start <= end <= 65535';
}

const WIRE_COMPRESSION: Record<PulsarCompressionType, string> = {
  None: 'NONE',
  Zlib: 'ZLIB',
  LZ4: 'LZ4',
  ZSTD: 'ZSTD',
  SNAPPY: 'SNAPPY',
};
/** The broker's Java producer names the routing modes differently from the native client. */
export const WIRE_ROUTING_MODE: Record<PulsarRoutingMode, string> = {
  RoundRobinDistribution: 'RoundRobinPartition',
  UseSinglePartition: 'SinglePartition',
};

export const CONSUMER_OPTION_SPECS: Readonly<Record<keyof PulsarConsumerOptions, OptionSpec>> = {
  ackTimeoutMs: { check: ackTimeout, websocket: 'ackTimeoutMillis', native: true },
  receiverQueueSize: { check: integer(0), websocket: 'receiverQueueSize', native: true },
  receiverQueueSizeAcrossPartitions: { check: integer(0), websocket: false, native: true },
  consumerName: { check: nonBlank, websocket: 'consumerName', native: true },
  priorityLevel: { check: integer(0), websocket: 'priorityLevel', native: false },
  keySharedPolicy: { check: keySharedPolicy, websocket: false, native: true },
  replicateSubscriptionState: { check: boolean, websocket: false, native: true },
  readCompacted: { check: boolean, websocket: false, native: true },
  batchIndexAckEnabled: { check: boolean, websocket: false, native: true },
  maxPendingChunkedMessage: { check: integer(1), websocket: false, native: true },
  properties: { check: stringMap, websocket: false, native: true },
};

export const PRODUCER_OPTION_SPECS: Readonly<Record<keyof PulsarProducerOptions, OptionSpec>> = {
  compressionType: {
    check: oneOf(Object.keys(WIRE_COMPRESSION)),
    websocket: 'compressionType',
    wire: (value) => WIRE_COMPRESSION[value as PulsarCompressionType],
    native: true,
  },
  batchingEnabled: { check: boolean, websocket: 'batchingEnabled', native: true },
  batchingMaxMessages: { check: integer(1), websocket: 'batchingMaxMessages', native: true },
  batchingMaxPublishDelayMs: { check: integer(0), websocket: 'batchingMaxPublishDelay', native: true },
  batchingMaxAllowedSizeInBytes: { check: integer(1), websocket: false, native: true },
  chunkingEnabled: { check: boolean, websocket: false, native: true },
  sendTimeoutMs: { check: integer(0), websocket: 'sendTimeoutMillis', native: true },
  maxPendingMessages: { check: integer(1), websocket: 'maxPendingMessages', native: true },
  maxPendingMessagesAcrossPartitions: { check: integer(1), websocket: false, native: true },
  blockIfQueueFull: { check: boolean, websocket: false, native: true },
  messageRoutingMode: {
    check: oneOf(Object.keys(WIRE_ROUTING_MODE)),
    websocket: 'messageRoutingMode',
    wire: (value) => WIRE_ROUTING_MODE[value as PulsarRoutingMode],
    native: true,
  },
  producerName: { check: nonBlank, websocket: 'producerName', native: true },
  initialSequenceId: { check: integer(0), websocket: 'initialSequenceId', native: true },
  accessMode: {
    check: oneOf(['Shared', 'Exclusive', 'WaitForExclusive', 'ExclusiveWithFencing']),
    websocket: false,
    native: true,
  },
  properties: { check: stringMap, websocket: false, native: true },
};

/** Client settings the library sets itself, with the library option to use instead. */
const RESERVED: Record<PulsarOptionsKind, Record<string, string>> = {
  consumer: {
    topic: 'the topic is the server option topics or @BabelHandler topic',
    topics: 'the topics are the server option topics or @BabelHandler topic',
    subscription: 'the subscription is the server option subscription or @BabelHandler subscription',
    subscriptionType: 'the subscription type is the server option subscriptionType',
    subscriptionInitialPosition: 'use the server option subscriptionInitialPosition',
    nAckRedeliverTimeoutMs: 'use the server option nackRedeliverTimeoutMs',
    listener: 'the library receives the messages itself',
    deadLetterPolicy: 'the library dead-letters itself (the server option deadLetter)',
    schema: 'the library reads the bytes as the BabelQueue JSON envelope',
  },
  producer: {
    topic: 'the topic is the publish target',
    hashingScheme:
      'the library fixes JavaStringHash so that a key lands on the same partition whichever client publishes it',
    batchingType: 'the library fixes KeyBasedBatching, which Key_Shared subscriptions need',
    messageRouter: 'the library routes by the message key',
    schema: 'the library writes the BabelQueue JSON envelope as bytes',
  },
};

const specsOf = (kind: PulsarOptionsKind): Readonly<Record<string, OptionSpec>> =>
  kind === 'consumer' ? CONSUMER_OPTION_SPECS : PRODUCER_OPTION_SPECS;

/** The pass-through option names of a kind, in table order. */
export const optionNames = (kind: PulsarOptionsKind): string[] => Object.keys(specsOf(kind));

/** The reason a client cannot honour `key` (of a known spec), or undefined when it can. */
export function unsupportedReason(kind: PulsarOptionsKind, key: string, client: PulsarClientName): string | undefined {
  const spec = specsOf(kind)[key];
  if (!spec) return undefined;
  if (client === 'websocket' && spec.websocket === false) {
    return (
      `${key} is not supported by the WebSocket client: the broker's WebSocket API has no ${kind} parameter for it ` +
      '(use a pulsar:// serviceUrl for the native client, or leave it out)'
    );
  }
  if (client === 'native' && !spec.native) {
    return (
      `${key} is not supported by the native pulsar-client: its Node binding has no such ${kind} setting ` +
      '(use an http(s):// serviceUrl for the WebSocket client, or leave it out)'
    );
  }
  return undefined;
}

/**
 * Checks a pass-through object: an object, known keys only (library-controlled ones refused with the option to use
 * instead), valid values, and (when the client is known) keys that client supports. Returns the options without
 * undefined entries; throws an Error whose message starts with `where`.
 */
export function checkClientOptions<T extends PulsarConsumerOptions | PulsarProducerOptions>(
  kind: PulsarOptionsKind,
  value: unknown,
  where: string,
  client?: PulsarClientName,
  raise: RaiseOptionError = raiseStandardError,
): T {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return raise(`${where} must be an object of Pulsar ${kind} settings, got ${describeValue(value)}`, 'type');
  }
  const specs = specsOf(kind);
  const checked: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (entry === undefined) continue;
    const reserved = RESERVED[kind][key];
    if (reserved !== undefined) return raise(`${where}.${key} cannot be passed through: ${reserved}`, 'type');
    const spec = specs[key];
    if (!spec) {
      return raise(
        `${where}.${key} is not a Pulsar ${kind} setting the library passes through; allowed: ${optionNames(kind).join(', ')}`,
        'type',
      );
    }
    const problem = spec.check(entry);
    if (problem !== undefined) return raise(`${where}.${key}${problem.startsWith('.') ? '' : ' '}${problem}`, 'type');
    const unsupported = client && unsupportedReason(kind, key, client);
    if (unsupported) return raise(`${where}.${unsupported}`, 'type');
    checked[key] = entry;
  }
  if (kind === 'producer' && checked.chunkingEnabled === true && checked.batchingEnabled === true) {
    return raise(
      `${where}: chunkingEnabled needs batching off (the client does not chunk batched messages); leave batchingEnabled out`,
      'type',
    );
  }
  return checked as T;
}

/** Producer options of a pool: for every topic, and per topic (merged over the former). */
export interface ProducerOptionsSettings {
  producerOptions?: PulsarProducerOptions;
  /** Per topic, short (`orders`) or full name; merged over `producerOptions`. */
  producerOptionsByTopic?: Record<string, PulsarProducerOptions>;
}

/** Checks both settings; the per-topic keys are returned as given (the caller normalises the names). */
export function checkProducerSettings(
  settings: ProducerOptionsSettings,
  where: string,
  client?: PulsarClientName,
  raise: RaiseOptionError = raiseStandardError,
): ProducerOptionsSettings {
  const result: ProducerOptionsSettings = {};
  if (settings.producerOptions !== undefined) {
    result.producerOptions = checkClientOptions(
      'producer',
      settings.producerOptions,
      `${where}producerOptions`,
      client,
      raise,
    );
  }
  const byTopic = settings.producerOptionsByTopic;
  if (byTopic !== undefined) {
    if (typeof byTopic !== 'object' || byTopic === null || Array.isArray(byTopic)) {
      return raise(
        `${where}producerOptionsByTopic must be an object of topic name to producer settings, got ${describeValue(byTopic)}`,
        'type',
      );
    }
    result.producerOptionsByTopic = {};
    for (const [topic, options] of Object.entries(byTopic)) {
      if (topic.trim() === '') return raise(`${where}producerOptionsByTopic has a blank topic name`, 'type');
      const merged = { ...result.producerOptions, ...(options as PulsarProducerOptions) };
      checkClientOptions('producer', merged, `${where}producerOptionsByTopic[${JSON.stringify(topic)}]`, client, raise);
      result.producerOptionsByTopic[topic] = checkClientOptions(
        'producer',
        options,
        `${where}producerOptionsByTopic[${JSON.stringify(topic)}]`,
        client,
        raise,
      );
    }
  }
  return result;
}

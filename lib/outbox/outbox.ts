import { BabelQueueError, EnvelopeCodec, bareTopicName } from '../envelope/index.js';
import { isMessageData, lossyDataProblem, urnProblem } from '../envelope/producer-checks.js';
import { parseTopic } from '../pulsar/topic-name.js';
import type { FieldCipher } from '../schema/gdpr.js';
import { publishPayload } from '../schema/message-payload.js';
import { checkPayloadSchema, type PayloadSchema } from '../schema/payload-schema.js';
import { isUrnContract, type UrnContract } from '../schema/urn-contract.js';
import {
  checkInstant,
  checkScheduleId,
  checkScheduleTiming,
  type ScheduledMessage,
  type ScheduleHandle,
  type ScheduleListQuery,
  type ScheduleOptions,
} from '../schedule/index.js';
import { randomUUID } from 'node:crypto';
import {
  cancelSchedule,
  declareSchedule as upsertDeclaredSchedule,
  getSchedule,
  insertSchedule,
  listSchedules,
  runScheduleNow,
} from './schedule-store.js';
import { DEFAULT_SCHEDULE_TABLE } from './schedule-table.js';
import { checkSqlRunner, runSql, type OutboxSqlRunner } from './sql.js';
import { checkOutboxTable } from './table.js';

export interface BabelOutboxOptions {
  /** The outbox table (see outboxMigrationSql); default `babelqueue_outbox`. */
  table?: string;
  /** Topic of write() when the call names none. */
  topic?: string;
  /** Encrypts the `x-gdpr-sensitive` fields of a write's schema (docs/schemas.md). */
  cipher?: FieldCipher;
  /** The table of stored schedules (see scheduleMigrationSql); default `babelqueue_schedules`. */
  scheduleTable?: string;
}

export interface OutboxWriteOptions {
  /** Topic the relay publishes to; defaults to the outbox's topic. `meta.queue` is its bare name. */
  topic?: string;
  /** Continue this trace (`trace_id`); a new UUID when absent or blank. */
  traceId?: string;
  /** The envelope's `meta.id`; a new UUID when absent. */
  id?: string;
  /** Partition key the relay publishes with. */
  key?: string;
  /** Validate `data` (InvalidPayloadError, nothing written) and encrypt its marked fields; default: the contract's. */
  schema?: PayloadSchema;
  /**
   * Publish no sooner than this time (a Date, epoch ms or ISO text): the row waits in the outbox until then. Not
   * cancellable: use schedule() for a message you may cancel.
   */
  at?: Date | number | string;
  /** Publish no sooner than this many milliseconds after the transaction's start (the database's clock). */
  delay?: number;
}

/** A message's parts, checked, ready to be encoded or stored. */
interface CheckedMessage {
  urn: string;
  data: Record<string, unknown>;
  topic: string;
  key: string | null;
  traceId: string | undefined;
}

function checkTopic(topic: unknown, name: string): string {
  if (typeof topic !== 'string' || topic.trim() === '') {
    throw new BabelQueueError(`${name} must be a non-blank topic name, got ${JSON.stringify(topic) ?? String(topic)}`);
  }
  parseTopic(topic.trim());
  return topic.trim();
}

/**
 * The write side of the transactional outbox: encodes an envelope and inserts it, in the caller's own open
 * transaction, next to the business rows. It never begins, commits or rolls back: the message exists exactly
 * when the caller's transaction commits. The relay (OutboxRelay) publishes it afterwards. See docs/outbox.md.
 */
export class BabelOutbox {
  readonly table: string;
  /** The table of stored schedules. */
  readonly scheduleTable: string;
  private readonly defaultTopic: string | undefined;
  private readonly cipher: FieldCipher | undefined;

  constructor(options: BabelOutboxOptions = {}) {
    this.table = checkOutboxTable(options.table, 'options.table');
    this.scheduleTable = checkOutboxTable(options.scheduleTable ?? DEFAULT_SCHEDULE_TABLE, 'options.scheduleTable');
    this.defaultTopic = options.topic === undefined ? undefined : checkTopic(options.topic, 'options.topic');
    this.cipher = options.cipher;
  }

  /**
   * Writes one message into the outbox inside `transaction` (a pg PoolClient after BEGIN, or a TypeORM
   * EntityManager inside `dataSource.transaction(...)`) and resolves to its `meta.id`. Rejects before writing, as
   * the publisher does, on a URN that is blank or not `urn:…`, data that is not a plain object or that JSON would
   * change (NaN, Infinity, undefined, functions, at any depth), or no topic.
   */
  write(transaction: OutboxSqlRunner, urn: string, data: object, options?: OutboxWriteOptions): Promise<string>;
  /** Writes through a typed contract (defineUrn): `data` must be of its payload type; its schema is validated. */
  write<T extends object>(
    transaction: OutboxSqlRunner,
    contract: UrnContract<T>,
    data: NoInfer<T>,
    options?: OutboxWriteOptions,
  ): Promise<string>;
  async write(
    transaction: OutboxSqlRunner,
    urnOrContract: string | UrnContract<object>,
    given: object,
    options: OutboxWriteOptions = {},
  ): Promise<string> {
    const runner = checkSqlRunner(transaction, 'the transaction argument of BabelOutbox.write');
    const message = this.checkMessage('BabelOutbox.write', urnOrContract, given, options);
    if (options.at !== undefined && options.delay !== undefined) {
      throw new BabelQueueError('BabelOutbox.write takes options.at or options.delay, not both');
    }
    const at = options.at === undefined ? null : checkInstant(options.at, 'options.at');
    const delay = options.delay;
    if (delay !== undefined && (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0)) {
      throw new BabelQueueError(`options.delay must be a finite number of milliseconds >= 0, got ${String(delay)}`);
    }
    const envelope = EnvelopeCodec.make(message.urn, message.data, {
      queue: bareTopicName(message.topic),
      ...(message.traceId !== undefined && { traceId: message.traceId }),
      ...(options.id !== undefined && { id: options.id }),
    });
    const body = EnvelopeCodec.encodeToBuffer(envelope);
    // The relay claims rows whose next_attempt_at has come: a later one is a delayed message, on the database's clock.
    await runSql(
      runner,
      `INSERT INTO ${this.table} (message_id, topic, partition_key, body, next_attempt_at)
         VALUES ($1, $2, $3, $4, COALESCE($5::timestamptz, now() + ($6::bigint * interval '1 millisecond')))`,
      [envelope.meta.id, message.topic, message.key, body, at, Math.ceil(delay ?? 0)],
    );
    return envelope.meta.id;
  }

  /**
   * Stores a scheduled message inside `transaction` (docs/scheduling.md): one-off (`at` or `delay`) or recurring
   * (`cron`, `tz`, `missed`). It exists exactly when the transaction commits; the schedule dispatcher then writes
   * it to the outbox when due and the relay publishes it. The same `id` again is the same schedule (resolves to
   * its handle, `created: false`, nothing written). Rejects before storing what write() rejects.
   */
  schedule(transaction: OutboxSqlRunner, urn: string, data: object, options: ScheduleOptions): Promise<ScheduleHandle>;
  /** Schedules through a typed contract (defineUrn): `data` must be of its payload type; its schema is validated. */
  schedule<T extends object>(
    transaction: OutboxSqlRunner,
    contract: UrnContract<T>,
    data: NoInfer<T>,
    options: ScheduleOptions,
  ): Promise<ScheduleHandle>;
  async schedule(
    transaction: OutboxSqlRunner,
    urnOrContract: string | UrnContract<object>,
    given: object,
    options: ScheduleOptions,
  ): Promise<ScheduleHandle> {
    const runner = checkSqlRunner(transaction, 'the transaction argument of BabelOutbox.schedule');
    const message = this.checkMessage('BabelOutbox.schedule', urnOrContract, given, options ?? {});
    const timing = checkScheduleTiming(options);
    const id = options.id === undefined ? randomUUID() : checkScheduleId(options.id);
    return insertSchedule(runner, this.scheduleTable, {
      id,
      urn: message.urn,
      topic: message.topic,
      key: message.key,
      traceId: message.traceId ?? null,
      data: JSON.stringify(message.data),
      timing,
    });
  }

  /**
   * Stores a recurring schedule (`cron`, `tz`, `missed`, `id` required), or brings the stored one with this id up
   * to date: its URN, topic, key and data always; its cron, time zone and next tick only when they changed. For
   * schedules declared in code, at every start (the module does it for `@BabelSchedule`). A cancelled one stays so.
   */
  async declareSchedule(
    runner: OutboxSqlRunner,
    urn: string,
    data: object,
    options: ScheduleOptions & { id: string; cron: string },
  ): Promise<ScheduleHandle> {
    const checked = checkSqlRunner(runner, 'the runner of declareSchedule');
    const message = this.checkMessage('BabelOutbox.declareSchedule', urn, data, options ?? {});
    if (options.cron === undefined) throw new BabelQueueError('BabelOutbox.declareSchedule needs options.cron');
    return upsertDeclaredSchedule(checked, this.scheduleTable, {
      id: checkScheduleId(options.id),
      urn: message.urn,
      topic: message.topic,
      key: message.key,
      traceId: message.traceId ?? null,
      data: JSON.stringify(message.data),
      timing: checkScheduleTiming(options),
    });
  }

  /**
   * Cancels a pending schedule (on `runner`: a transaction, or a pg Pool for a statement of its own). Resolves to
   * true when it was pending: it never fires again. False when there is none with this id or it will not fire
   * again anyway (fired, cancelled, ended).
   */
  cancelSchedule(runner: OutboxSqlRunner, id: string): Promise<boolean> {
    return cancelSchedule(checkSqlRunner(runner, 'the runner of cancelSchedule'), this.scheduleTable, id);
  }

  /** Makes a pending schedule due now: the next dispatcher pass fires it (a recurring one then goes on from now). */
  runScheduleNow(runner: OutboxSqlRunner, id: string): Promise<boolean> {
    return runScheduleNow(checkSqlRunner(runner, 'the runner of runScheduleNow'), this.scheduleTable, id);
  }

  /** One schedule, whatever its state (pending, fired, cancelled, ended); null when there is none. */
  getSchedule(runner: OutboxSqlRunner, id: string): Promise<ScheduledMessage | null> {
    return getSchedule(checkSqlRunner(runner, 'the runner of getSchedule'), this.scheduleTable, id);
  }

  /** Pending schedules, soonest first: `{ urn?, before?, limit? }` (default limit 100). */
  listSchedules(runner: OutboxSqlRunner, query: ScheduleListQuery = {}): Promise<ScheduledMessage[]> {
    return listSchedules(checkSqlRunner(runner, 'the runner of listSchedules'), this.scheduleTable, query);
  }

  /** The checks write() and schedule() share: the publisher's rules, the topic, the key, the schema. */
  private checkMessage(
    what: string,
    urnOrContract: string | UrnContract<object>,
    given: object,
    options: { topic?: string; key?: string; traceId?: string; schema?: PayloadSchema },
  ): CheckedMessage {
    const contract = isUrnContract(urnOrContract) ? urnOrContract : undefined;
    const urn = contract ? contract.urn : (urnOrContract as string);
    if (typeof urn !== 'string' || urn.trim() === '') {
      throw new BabelQueueError(`${what} needs a non-blank URN, got ${JSON.stringify(urn) ?? String(urn)}`);
    }
    if (!isMessageData(given)) throw new BabelQueueError(`${what} data must be a plain object (use {} for none)`);
    // The publisher's rules: what is written is what it would have sent.
    const refused = urnProblem(urn) ?? lossyDataProblem(given);
    if (refused) throw new BabelQueueError(`${what} refused, nothing written: ${refused}`);
    const topic = options.topic === undefined ? this.defaultTopic : checkTopic(options.topic, 'options.topic');
    if (topic === undefined) {
      throw new BabelQueueError(`${what} needs a topic: pass { topic } or configure the outbox topic`);
    }
    if (options.key !== undefined && typeof options.key !== 'string') {
      throw new BabelQueueError('options.key must be a string');
    }
    if (options.traceId !== undefined && typeof options.traceId !== 'string') {
      throw new BabelQueueError('options.traceId must be a string');
    }
    const schema = options.schema ?? contract?.schema;
    const data = (
      schema === undefined
        ? given
        : publishPayload(urn.trim(), given, checkPayloadSchema(schema, 'options.schema'), this.cipher)
    ) as Record<string, unknown>;
    const traceId = options.traceId !== undefined && options.traceId.trim() !== '' ? options.traceId : undefined;
    return { urn, data, topic, key: options.key || null, traceId };
  }
}

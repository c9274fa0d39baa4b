import { BabelQueueError, EnvelopeCodec, bareTopicName } from '../envelope/index.js';
import { isMessageData, lossyDataProblem, urnProblem } from '../envelope/producer-checks.js';
import { parseTopic } from '../pulsar/websocket/index.js';
import type { FieldCipher } from '../schema/gdpr.js';
import { publishPayload } from '../schema/message-payload.js';
import { checkPayloadSchema, type PayloadSchema } from '../schema/payload-schema.js';
import { isUrnContract, type UrnContract } from '../schema/urn-contract.js';
import { checkSqlRunner, runSql, type OutboxSqlRunner } from './sql.js';
import { checkOutboxTable } from './table.js';

export interface BabelOutboxOptions {
  /** The outbox table (see outboxMigrationSql); default `babelqueue_outbox`. */
  table?: string;
  /** Topic of write() when the call names none. */
  topic?: string;
  /** Encrypts the `x-gdpr-sensitive` fields of a write's schema (docs/schemas.md). */
  cipher?: FieldCipher;
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
  private readonly defaultTopic: string | undefined;
  private readonly cipher: FieldCipher | undefined;

  constructor(options: BabelOutboxOptions = {}) {
    this.table = checkOutboxTable(options.table, 'options.table');
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
    const contract = isUrnContract(urnOrContract) ? urnOrContract : undefined;
    const urn = contract ? contract.urn : (urnOrContract as string);
    const runner = checkSqlRunner(transaction, 'the transaction argument of BabelOutbox.write');
    if (typeof urn !== 'string' || urn.trim() === '') {
      throw new BabelQueueError(`BabelOutbox.write needs a non-blank URN, got ${JSON.stringify(urn) ?? String(urn)}`);
    }
    if (!isMessageData(given))
      throw new BabelQueueError('BabelOutbox.write data must be a plain object (use {} for none)');
    // The publisher's rules: what is written is what it would have sent.
    const refused = urnProblem(urn) ?? lossyDataProblem(given);
    if (refused) throw new BabelQueueError(`BabelOutbox.write refused, nothing written: ${refused}`);
    const topic = options.topic === undefined ? this.defaultTopic : checkTopic(options.topic, 'options.topic');
    if (topic === undefined) {
      throw new BabelQueueError('BabelOutbox.write needs a topic: pass { topic } or configure the outbox topic');
    }
    if (options.key !== undefined && typeof options.key !== 'string') {
      throw new BabelQueueError('options.key must be a string');
    }
    const schema = options.schema ?? contract?.schema;
    const data =
      schema === undefined
        ? given
        : publishPayload(urn.trim(), given, checkPayloadSchema(schema, 'options.schema'), this.cipher);
    const envelope = EnvelopeCodec.make(urn, data, {
      queue: bareTopicName(topic),
      ...(options.traceId !== undefined && options.traceId.trim() !== '' && { traceId: options.traceId }),
      ...(options.id !== undefined && { id: options.id }),
    });
    const body = EnvelopeCodec.encodeToBuffer(envelope);
    await runSql(runner, `INSERT INTO ${this.table} (message_id, topic, partition_key, body) VALUES ($1, $2, $3, $4)`, [
      envelope.meta.id,
      topic,
      options.key || null,
      body,
    ]);
    return envelope.meta.id;
  }
}

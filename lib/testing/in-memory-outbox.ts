import { BabelQueueError, EnvelopeCodec, bareTopicName } from '../envelope/index.js';
import { isMessageData, lossyDataProblem, urnProblem } from '../envelope/producer-checks.js';
import { BabelOutbox, type BabelOutboxOptions, type OutboxWriteOptions } from '../outbox/outbox.js';
import type { OutboxSqlRunner } from '../outbox/sql.js';
import { pulsarProperties } from '../pulsar/binding.js';
import type { PulsarProducerMessage } from '../pulsar/client-types.js';
import {
  checkInstant,
  type ScheduledMessage,
  type ScheduleHandle,
  type ScheduleListQuery,
  type ScheduleOptions,
} from '../schedule/index.js';
import { isUrnContract, type UrnContract } from '../schema/urn-contract.js';
import type { InMemorySchedules } from './in-memory-schedules.js';

/**
 * The module's BabelOutbox under `useInMemoryPulsar` with an InMemoryPulsar: no PostgreSQL. What it is given is
 * applied at once, in memory (the transaction argument is not used, so a rollback does not undo it):
 * `schedule()` and its kin keep schedules on the kit's clock for `pulsar.advance(ms)` to fire, and `write()`
 * stores the message on the in-memory topic (with `at` / `delay`, once advance() passes that time). The
 * envelope and properties are a real firing's; a payload schema is not applied (docs/scheduling.md).
 */
export class InMemoryOutbox extends BabelOutbox {
  private readonly topic: string | undefined;

  constructor(
    private readonly kit: InMemorySchedules,
    private readonly clock: { now(): number },
    options: BabelOutboxOptions = {},
  ) {
    super(options);
    this.topic = options.topic;
  }

  override write(
    transaction: OutboxSqlRunner,
    urn: string,
    data: object,
    options?: OutboxWriteOptions,
  ): Promise<string>;
  override write<T extends object>(
    transaction: OutboxSqlRunner,
    contract: UrnContract<T>,
    data: NoInfer<T>,
    options?: OutboxWriteOptions,
  ): Promise<string>;
  override async write(
    _transaction: OutboxSqlRunner,
    urnOrContract: string | UrnContract<object>,
    data: object,
    options: OutboxWriteOptions = {},
  ): Promise<string> {
    const urn = isUrnContract(urnOrContract) ? urnOrContract.urn : urnOrContract;
    if (!isMessageData(data))
      throw new BabelQueueError('BabelOutbox.write data must be a plain object (use {} for none)');
    const refused = urnProblem(urn) ?? lossyDataProblem(data);
    if (refused) throw new BabelQueueError(`BabelOutbox.write refused, nothing written: ${refused}`);
    const topic = options.topic ?? this.topic;
    if (topic === undefined)
      throw new BabelQueueError('BabelOutbox.write needs a topic: pass { topic } or configure one');
    if (options.at !== undefined && options.delay !== undefined) {
      throw new BabelQueueError('BabelOutbox.write takes options.at or options.delay, not both');
    }
    const due =
      options.at !== undefined
        ? checkInstant(options.at, 'options.at')
        : new Date(this.clock.now() + Math.ceil(options.delay ?? 0));
    const envelope = EnvelopeCodec.make(urn, data as Record<string, unknown>, {
      queue: bareTopicName(topic),
      ...(options.traceId !== undefined && options.traceId.trim() !== '' && { traceId: options.traceId }),
      ...(options.id !== undefined && { id: options.id }),
    });
    const message: PulsarProducerMessage = {
      data: EnvelopeCodec.encodeToBuffer(envelope),
      properties: pulsarProperties(envelope),
    };
    if (options.key) message.partitionKey = options.key;
    this.kit.hold(topic, message, due);
    return envelope.meta.id;
  }

  override schedule(
    transaction: OutboxSqlRunner,
    urn: string,
    data: object,
    options: ScheduleOptions,
  ): Promise<ScheduleHandle>;
  override schedule<T extends object>(
    transaction: OutboxSqlRunner,
    contract: UrnContract<T>,
    data: NoInfer<T>,
    options: ScheduleOptions,
  ): Promise<ScheduleHandle>;
  override async schedule(
    _transaction: OutboxSqlRunner,
    urnOrContract: string | UrnContract<object>,
    data: object,
    options: ScheduleOptions,
  ): Promise<ScheduleHandle> {
    return this.kit.schedule(urnOrContract, data, options, this.topic);
  }

  override async declareSchedule(
    _runner: OutboxSqlRunner,
    urn: string,
    data: object,
    options: ScheduleOptions & { id: string; cron: string },
  ): Promise<ScheduleHandle> {
    return this.kit.declare(urn, data, options, this.topic);
  }

  override async cancelSchedule(_runner: OutboxSqlRunner, id: string): Promise<boolean> {
    return this.kit.cancel(id);
  }

  override async runScheduleNow(_runner: OutboxSqlRunner, id: string): Promise<boolean> {
    return this.kit.runNow(id);
  }

  override async getSchedule(_runner: OutboxSqlRunner, id: string): Promise<ScheduledMessage | null> {
    return this.kit.get(id);
  }

  override async listSchedules(_runner: OutboxSqlRunner, query?: ScheduleListQuery): Promise<ScheduledMessage[]> {
    return this.kit.list(query);
  }
}

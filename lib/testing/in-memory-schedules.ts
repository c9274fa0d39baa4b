import { randomUUID } from 'node:crypto';
import { BabelQueueError, EnvelopeCodec, bareTopicName } from '../envelope/index.js';
import { isMessageData, lossyDataProblem, urnProblem } from '../envelope/producer-checks.js';
import type { ClientSchedules } from '../nest/client/client-schedules.js';
import { pulsarProperties } from '../pulsar/binding.js';
import type { PulsarProducerMessage } from '../pulsar/client-types.js';
import {
  checkInstant,
  checkScheduleId,
  checkScheduleTiming,
  nextTickAfter,
  scheduleProperties,
  type ScheduledMessage,
  type ScheduleHandle,
  type ScheduleListQuery,
  type ScheduleOptions,
  type ScheduleTiming,
} from '../schedule/index.js';
import { isUrnContract, type UrnContract } from '../schema/urn-contract.js';
import type { TestClock } from './test-clock.js';

interface KitSchedule {
  id: string;
  urn: string;
  topic: string;
  key: string | null;
  traceId: string | undefined;
  data: Record<string, unknown>;
  timing: ScheduleTiming;
  nextTick: Date | null;
  fired: number;
  lastTick: Date | null;
  createdAt: Date;
  cancelledAt: Date | null;
}

/** A recurring schedule fires at most this many ticks in one advance(), so a runaway expression cannot hang a test. */
const MAX_TICKS_PER_ADVANCE = 100_000;

/**
 * The testing kit's stored schedules: what the module's client schedules under `useInMemoryPulsar`, kept in memory
 * and fired on the kit's clock by `pulsar.advance(ms)` (every tick passed, as a dispatcher that ran all along
 * would: the missed-tick policy is not applied). No PostgreSQL, no outbox: the message goes straight to the
 * in-memory topic, with the same envelope and `bq-schedule-*` properties as a real firing.
 */
export class InMemorySchedules {
  private readonly schedules = new Map<string, KitSchedule>();

  constructor(
    private readonly clock: TestClock,
    private readonly store: (topic: string, message: PulsarProducerMessage) => void,
  ) {}

  /** The client's view, publishing to `defaultTopic` when a schedule names none. */
  forClient(defaultTopic: string | undefined): ClientSchedules {
    return {
      schedule: async (urn, data, options) => this.schedule(urn, data, options, defaultTopic),
      cancel: async (id) => this.cancel(id),
      get: async (id) => this.get(id),
      list: async (query) => this.list(query),
    };
  }

  /** Fires every schedule whose ticks the clock has passed, oldest first (advance() calls it). */
  fireDue(): void {
    const now = this.clock.now();
    const due = [...this.schedules.values()]
      .filter((schedule) => schedule.nextTick !== null && schedule.nextTick.getTime() <= now)
      .sort((a, b) => a.nextTick!.getTime() - b.nextTick!.getTime());
    for (const schedule of due) {
      for (let fired = 0; schedule.nextTick !== null && schedule.nextTick.getTime() <= now; fired++) {
        if (fired >= MAX_TICKS_PER_ADVANCE) break;
        try {
          this.fire(schedule, schedule.nextTick);
        } catch {
          break; // the broker is down (setAvailable(false)): the tick stays due, as it would stay in the outbox
        }
        const { timing } = schedule;
        schedule.nextTick = timing.kind === 'cron' ? nextTickAfter(timing.cron, timing.tz, schedule.nextTick) : null;
      }
    }
  }

  private fire(schedule: KitSchedule, tick: Date): void {
    const envelope = EnvelopeCodec.make(schedule.urn, schedule.data, {
      queue: bareTopicName(schedule.topic),
      ...(schedule.traceId !== undefined && { traceId: schedule.traceId }),
    });
    const message: PulsarProducerMessage = {
      data: EnvelopeCodec.encodeToBuffer(envelope),
      properties: { ...scheduleProperties(schedule.id, tick), ...pulsarProperties(envelope) },
    };
    if (schedule.key) message.partitionKey = schedule.key;
    this.store(schedule.topic, message);
    schedule.fired += 1;
    schedule.lastTick = tick;
  }

  private schedule(
    urnOrContract: string | UrnContract<object>,
    data: object,
    options: ScheduleOptions,
    defaultTopic: string | undefined,
  ): ScheduleHandle {
    const urn = isUrnContract(urnOrContract) ? urnOrContract.urn : urnOrContract;
    if (!isMessageData(data)) throw new BabelQueueError('schedule data must be a plain object (use {} for none)');
    const refused = urnProblem(urn) ?? lossyDataProblem(data);
    if (refused) throw new BabelQueueError(`schedule refused, nothing stored: ${refused}`);
    const topic = options?.topic ?? defaultTopic;
    if (topic === undefined) throw new BabelQueueError('schedule needs a topic: pass { topic } or configure one');
    const timing = checkScheduleTiming(options, new Date(this.clock.now()));
    const id = options.id === undefined ? randomUUID() : checkScheduleId(options.id);
    const existing = this.schedules.get(id);
    if (existing) return { id, created: false, nextTick: existing.nextTick };
    this.schedules.set(id, {
      id,
      urn,
      topic,
      key: options.key ?? null,
      traceId: options.traceId,
      data: JSON.parse(JSON.stringify(data)) as Record<string, unknown>,
      timing,
      nextTick: timing.firstTick,
      fired: 0,
      lastTick: null,
      createdAt: new Date(this.clock.now()),
      cancelledAt: null,
    });
    return { id, created: true, nextTick: timing.firstTick };
  }

  private cancel(id: string): boolean {
    const schedule = this.schedules.get(checkScheduleId(id, 'id'));
    if (!schedule || schedule.nextTick === null) return false;
    schedule.nextTick = null;
    schedule.cancelledAt = new Date(this.clock.now());
    return true;
  }

  private get(id: string): ScheduledMessage | null {
    const schedule = this.schedules.get(checkScheduleId(id, 'id'));
    return schedule ? view(schedule) : null;
  }

  private list(query: ScheduleListQuery = {}): ScheduledMessage[] {
    const before = query.before === undefined ? undefined : checkInstant(query.before, 'before').getTime();
    return [...this.schedules.values()]
      .filter((s) => s.nextTick !== null && (query.urn === undefined || s.urn === query.urn))
      .filter((s) => before === undefined || s.nextTick!.getTime() <= before)
      .sort((a, b) => a.nextTick!.getTime() - b.nextTick!.getTime() || a.id.localeCompare(b.id))
      .slice(0, query.limit ?? 100)
      .map(view);
  }
}

function view(schedule: KitSchedule): ScheduledMessage {
  const cron = schedule.timing.kind === 'cron' ? schedule.timing : null;
  return {
    id: schedule.id,
    urn: schedule.urn,
    topic: schedule.topic,
    key: schedule.key,
    data: schedule.data,
    cron: cron?.cron ?? null,
    tz: cron?.tz ?? null,
    missed: cron?.missed ?? null,
    state: schedule.cancelledAt ? 'cancelled' : schedule.nextTick ? 'pending' : cron ? 'ended' : 'fired',
    nextTick: schedule.nextTick,
    fired: schedule.fired,
    lastTick: schedule.lastTick,
    createdAt: schedule.createdAt,
    cancelledAt: schedule.cancelledAt,
  };
}

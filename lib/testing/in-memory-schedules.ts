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
import type { BabelOutbox, BabelOutboxOptions } from '../outbox/outbox.js';
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
  /** Outbox messages written with a time, waiting for the clock. */
  private held: Array<{ topic: string; message: PulsarProducerMessage; due: number }> = [];

  constructor(
    private readonly clock: TestClock,
    private readonly store: (topic: string, message: PulsarProducerMessage) => void,
    /** Makes the in-memory outbox over these schedules (InMemoryOutbox, given by the kit: it depends on this class). */
    private readonly makeOutbox: (schedules: InMemorySchedules, options: BabelOutboxOptions) => BabelOutbox,
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

  /** The module's BabelOutbox under the kit: schedules and writes in memory, no database (InMemoryOutbox). */
  outbox(options: BabelOutboxOptions): BabelOutbox {
    return this.makeOutbox(this, options);
  }

  /** Fires every schedule whose ticks the clock has passed, oldest first (advance() calls it). */
  fireDue(): void {
    const now = this.clock.now();
    const due = this.held.filter((entry) => entry.due <= now).sort((a, b) => a.due - b.due);
    this.held = this.held.filter((entry) => entry.due > now);
    for (const [index, entry] of due.entries()) {
      try {
        this.store(entry.topic, entry.message);
      } catch {
        this.held.push(...due.slice(index)); // the broker is down: they wait, as rows wait in the outbox
        break;
      }
    }
    this.fireDueSchedules(now);
  }

  private fireDueSchedules(now: number): void {
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

  /** Stores a schedule, as BabelOutbox.schedule() would (the same id again is the same schedule). */
  schedule(
    urnOrContract: string | UrnContract<object>,
    data: object,
    options: ScheduleOptions,
    defaultTopic: string | undefined,
  ): ScheduleHandle {
    const schedule = this.checked(urnOrContract, data, options, defaultTopic);
    const existing = this.schedules.get(schedule.id);
    if (existing) return { id: existing.id, created: false, nextTick: existing.nextTick };
    this.schedules.set(schedule.id, schedule);
    return { id: schedule.id, created: true, nextTick: schedule.nextTick };
  }

  /**
   * Stores a recurring schedule declared in code, or brings the stored one up to date as
   * BabelOutbox.declareSchedule() does: URN, topic, key and data always; the next tick only when the cron or time
   * zone changed; a cancelled one stays cancelled.
   */
  declare(urn: string, data: object, options: ScheduleOptions, defaultTopic: string | undefined): ScheduleHandle {
    if (options?.cron === undefined || options.id === undefined) {
      throw new BabelQueueError('a declared schedule needs options.id and options.cron');
    }
    const declared = this.checked(urn, data, options, defaultTopic);
    const existing = this.schedules.get(declared.id);
    if (!existing) {
      this.schedules.set(declared.id, declared);
      return { id: declared.id, created: true, nextTick: declared.nextTick };
    }
    const moved = !sameExpression(existing.timing, declared.timing);
    Object.assign(existing, {
      urn: declared.urn,
      topic: declared.topic,
      key: declared.key,
      traceId: declared.traceId,
      data: declared.data,
      timing: declared.timing,
      ...(moved && existing.cancelledAt === null && { nextTick: declared.nextTick }),
    });
    return { id: existing.id, created: false, nextTick: existing.nextTick };
  }

  /** Makes a pending schedule due now: the next advance() fires it (a recurring one then goes on from now). */
  runNow(id: string): boolean {
    const schedule = this.schedules.get(checkScheduleId(id, 'id'));
    if (!schedule || schedule.nextTick === null) return false;
    schedule.nextTick = new Date(this.clock.now());
    return true;
  }

  /**
   * Holds a message written to the outbox (BabelOutbox.write) until advance() passes its time (`at` / `delay`);
   * one due already is stored at once, or on a later advance() while the broker is unavailable.
   */
  hold(topic: string, message: PulsarProducerMessage, due: Date): void {
    if (due.getTime() <= this.clock.now()) {
      try {
        this.store(topic, message);
        return;
      } catch {
        // the broker is down (setAvailable(false)): the message waits, as a row waits in the outbox
      }
    }
    this.held.push({ topic, message, due: due.getTime() });
  }

  private checked(
    urnOrContract: string | UrnContract<object>,
    data: object,
    options: ScheduleOptions,
    defaultTopic: string | undefined,
  ): KitSchedule {
    const urn = isUrnContract(urnOrContract) ? urnOrContract.urn : urnOrContract;
    if (!isMessageData(data)) throw new BabelQueueError('schedule data must be a plain object (use {} for none)');
    const refused = urnProblem(urn) ?? lossyDataProblem(data);
    if (refused) throw new BabelQueueError(`schedule refused, nothing stored: ${refused}`);
    const topic = options?.topic ?? defaultTopic;
    if (topic === undefined) throw new BabelQueueError('schedule needs a topic: pass { topic } or configure one');
    const timing = checkScheduleTiming(options, new Date(this.clock.now()));
    return {
      id: options.id === undefined ? randomUUID() : checkScheduleId(options.id),
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
    };
  }

  /** Cancels a pending schedule: true when it was pending. */
  cancel(id: string): boolean {
    const schedule = this.schedules.get(checkScheduleId(id, 'id'));
    if (!schedule || schedule.nextTick === null) return false;
    schedule.nextTick = null;
    schedule.cancelledAt = new Date(this.clock.now());
    return true;
  }

  /** One schedule, whatever its state; null when there is none. */
  get(id: string): ScheduledMessage | null {
    const schedule = this.schedules.get(checkScheduleId(id, 'id'));
    return schedule ? view(schedule) : null;
  }

  /** Pending schedules, soonest first. */
  list(query: ScheduleListQuery = {}): ScheduledMessage[] {
    const before = query.before === undefined ? undefined : checkInstant(query.before, 'before').getTime();
    return [...this.schedules.values()]
      .filter((s) => s.nextTick !== null && (query.urn === undefined || s.urn === query.urn))
      .filter((s) => before === undefined || s.nextTick!.getTime() <= before)
      .sort((a, b) => a.nextTick!.getTime() - b.nextTick!.getTime() || a.id.localeCompare(b.id))
      .slice(0, query.limit ?? 100)
      .map(view);
  }
}

function sameExpression(a: ScheduleTiming, b: ScheduleTiming): boolean {
  return a.kind === 'cron' && b.kind === 'cron' && a.cron === b.cron && a.tz === b.tz;
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

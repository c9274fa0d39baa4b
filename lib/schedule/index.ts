export { checkCron, nextTickAfter } from './cron-ticks.js';
export { decideDueTicks, MISSED_TICK_POLICIES } from './missed-ticks.js';
export type { DueTicksInput, MissedTickPolicy, TickDecision } from './missed-ticks.js';
export { checkInstant, checkScheduleId, checkScheduleTiming } from './schedule-options.js';
export type {
  ScheduledMessage,
  ScheduleHandle,
  ScheduleListQuery,
  ScheduleOptions,
  ScheduleState,
  ScheduleTiming,
} from './schedule-options.js';
export { SCHEDULE_PROPERTIES, scheduleProperties } from './schedule-properties.js';
export { BABEL_SCHEDULE_METADATA, BabelSchedule } from './schedule.decorator.js';
export type { DeclaredScheduleOptions } from './schedule.decorator.js';

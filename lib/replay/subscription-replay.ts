import { randomUUID } from 'node:crypto';
import { parseTopic } from '../pulsar/topic-name.js';
import { errorText } from '../envelope/error-text.js';
import { TopicAdmin, type AdminConnection } from './admin-calls.js';
import { SubscriptionReplayError } from './errors.js';
import { describePoint, replayPointOf, type ReplayPoint } from './replay-point.js';

/** What to replay: one subscription of one topic, from a time or a message id. */
export interface SubscriptionReplayOptions {
  /** The topic (`orders` or `persistent://public/default/orders`); it must exist: nothing is created. */
  topic: string;
  /** The subscription to replay; it must exist. */
  subscription: string;
  /** Re-deliver every message published at or after this time (a Date or epoch ms). */
  since?: Date | number;
  /** Re-deliver from this message on, itself included: `(ledger,entry,partition,batch)` or `ledger:entry`. */
  messageId?: string;
  /** Move the subscription for real; without it the replay is a dry run that only counts. */
  yes?: boolean;
}

/** What a replay did, or would do (a dry run). */
export interface SubscriptionReplayResult {
  /** The full name of the topic replayed (for a message id on a partitioned topic, its partition). */
  topic: string;
  subscription: string;
  /** `since <ISO time>` or `message <id>`. */
  from: string;
  /** True when nothing was moved (no `yes: true`). */
  dryRun: boolean;
  /** The messages from that point to the end of the topic, as counted before the reset: what is re-delivered. */
  messages: number;
  /** Of those, how many the subscription had not acknowledged yet (delivered anyway, replay or not). */
  unacknowledged: number;
}

/**
 * Replays a subscription: counts the messages from the point on (on a temporary subscription, removed after),
 * refuses when the subscription still has unacknowledged messages from before the point (moving its cursor past
 * them would skip them), and unless it is a dry run resets the subscription's cursor through the admin API. The
 * broker then disconnects the subscription's consumers; they reconnect and receive every message from the point
 * on again (docs/operations.md#replaying-a-subscription).
 */
export async function replaySubscription(
  admin: AdminConnection,
  options: SubscriptionReplayOptions,
  now: () => number = Date.now,
): Promise<SubscriptionReplayResult> {
  if (!options || typeof options !== 'object')
    throw new SubscriptionReplayError('usage', 'replaySubscription needs { topic, subscription, since | messageId }');
  const topic = fullTopicOf(options.topic);
  const subscription = nonBlank(options.subscription, 'subscription');
  const point = replayPointOf(options, now());
  const target = await targetOf(admin, topic, point);
  const before = await target.admin.backlogs(target.partitioned);
  if (before === null)
    throw new SubscriptionReplayError('missing', `topic ${topic} does not exist (nothing was created)`);
  const unacknowledged = before.get(subscription);
  if (unacknowledged === undefined)
    throw new SubscriptionReplayError(
      'missing',
      `${topic} has no subscription ${subscription} (nothing was created); it has: ${[...before.keys()].join(', ') || 'none'}`,
    );
  const messages = await countFrom(target, point);
  const result = { topic: target.admin.topic, subscription, from: describePoint(point), messages, unacknowledged };
  // The cursor moves to the point: a message before it that is not acknowledged yet would never be delivered.
  if (unacknowledged > messages)
    throw new SubscriptionReplayError(
      'refused',
      `subscription ${subscription} of ${topic} has ${unacknowledged - messages} unacknowledged message(s) ` +
        `published before ${describePoint(point)}: a replay would skip them. Let it catch up, then replay`,
    );
  if (options.yes !== true) return { ...result, dryRun: true };
  await reset(target.admin, subscription, point);
  return { ...result, dryRun: false };
}

interface Target {
  admin: TopicAdmin;
  partitioned: boolean;
}

/** A message id on a partitioned topic names one partition: that partition is the topic replayed. */
async function targetOf(connection: AdminConnection, topic: string, point: ReplayPoint): Promise<Target> {
  const partitions = await new TopicAdmin(connection, topic).partitions();
  if (partitions === 0 || 'since' in point)
    return { admin: new TopicAdmin(connection, topic), partitioned: partitions > 0 };
  const { partitionIndex } = point.messageId;
  if (partitionIndex < 0 || partitionIndex >= partitions)
    throw new SubscriptionReplayError(
      'usage',
      `${topic} has ${partitions} partitions: the message id must name one of them (got partition ${partitionIndex})`,
    );
  return { admin: new TopicAdmin(connection, `${topic}-partition-${partitionIndex}`), partitioned: false };
}

/** The messages from the point to the end, counted on a subscription of its own (removed whatever happens). */
async function countFrom({ admin, partitioned }: Target, point: ReplayPoint): Promise<number> {
  const counter = `babelqueue-replay-count-${randomUUID().slice(0, 8)}`;
  await admin.createSubscriptionAtEarliest(counter);
  try {
    await reset(admin, counter, point);
    return (await admin.backlogs(partitioned))?.get(counter) ?? 0;
  } finally {
    await admin.deleteSubscription(counter).catch(() => undefined);
  }
}

function reset(admin: TopicAdmin, subscription: string, point: ReplayPoint): Promise<void> {
  return 'since' in point
    ? admin.resetToTime(subscription, point.since)
    : admin.resetToMessage(subscription, point.messageId);
}

function fullTopicOf(topic: unknown): string {
  try {
    return parseTopic(typeof topic === 'string' ? topic.trim() : topic).full;
  } catch (error) {
    throw new SubscriptionReplayError('usage', `topic: ${errorText(error)}`);
  }
}

function nonBlank(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new SubscriptionReplayError('usage', `${name} must be a non-blank string`);
  return value.trim();
}

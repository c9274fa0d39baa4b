// The multi-instance target of docs/scheduling.md: a schedule every second for 120 s on 3 instances of a
// module-built app, each a process of its own (test/support/scale/schedule-instance.ts) on the real PostgreSQL and
// broker, through two rolling restarts (each instance in turn: a new one starts, then the old one stops) and one
// kill -9. Exactly one firing per tick: 120 in the window, none twice, each handled with one meta.id. Lateness is
// printed and appended to test-results/schedule-figures.jsonl, never asserted.
import { jest } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { startInstance, type ScaleInstance } from '../../../scripts/lib/scale-run.mjs';
import { SCHEDULE_PROPERTIES } from '../../../lib/outbox/index.js';
import { onNative, serviceUrl, sleep, uniqueTopic, waitFor } from '../../support/broker.js';
import type { ScheduleRecord } from '../../support/scale/records.js';
import { newPool, postgresUrl } from './support.js';

jest.setTimeout(420_000);

const WINDOW_TICKS = 120;
const APP = path.resolve('test/support/scale/schedule-instance.ts');
/** A topic, tables and a schedule id of the test's own, for the instances' environment. */
function freshSettings(): Record<string, string> {
  const suffix = randomUUID().replaceAll('-', '').slice(0, 12);
  return {
    SCALE_SERVICE_URL: serviceUrl(),
    SCALE_TOPIC: uniqueTopic('schedule-instances'),
    SCALE_DATABASE_URL: postgresUrl(),
    SCALE_OUTBOX_TABLE: `outbox_${suffix}`,
    SCALE_SCHEDULE_TABLE: `schedules_${suffix}`,
    SCALE_SCHEDULE_ID: `every-second-${suffix}`,
  };
}
let settings = freshSettings();

type Instance = ScaleInstance<ScheduleRecord>;
const running: Instance[] = [];
const all: Instance[] = [];
/** What happened when, for the printout (ms after the window opened). */
const events: string[] = [];
let windowStart = 0;
let started = 0;

async function start(): Promise<Instance> {
  started += 1;
  const instance = await startInstance<ScheduleRecord>(`s${started}`, settings, 120_000, APP);
  all.push(instance);
  running.push(instance);
  return instance;
}
const note = (what: string) => events.push(`${((Date.now() - windowStart) / 1000).toFixed(1)} s ${what}`);
const until = (offsetMs: number) => sleep(Math.max(0, windowStart + offsetMs - Date.now()));

/** Each running instance in turn: a new one starts, then the old one stops (drained), as a deployment rolls. */
async function rollingRestart(): Promise<void> {
  for (const old of [...running]) {
    const fresh = await start();
    await old.stop();
    running.splice(running.indexOf(old), 1);
    note(`${old.name} replaced by ${fresh.name}`);
  }
}

beforeEach(() => {
  settings = freshSettings();
  all.length = 0;
  events.length = 0;
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((instance) => instance.kill()));
});

/** Every tick in the test's outbox table, with how many rows it has, oldest first. */
async function outboxTicks(): Promise<Array<{ tick: string; n: number }>> {
  const pool = newPool('bq-schedule-instances', 1);
  try {
    const { rows } = await pool.query<{ tick: string; n: number }>(
      `SELECT headers->>'${SCHEDULE_PROPERTIES.tick}' AS tick, count(*)::int AS n
         FROM ${settings.SCALE_OUTBOX_TABLE} GROUP BY 1 ORDER BY 1`,
    );
    return rows;
  } finally {
    await pool.end();
  }
}

const handled = () => all.flatMap((instance) => instance.deliveries());

test('a schedule every second for 120 s on 3 instances, two rolling restarts and a kill -9: exactly 120 firings', async () => {
  await Promise.all([start(), start(), start()]);
  windowStart = Math.ceil(Date.now() / 1000) * 1000 + 1000;
  const windowEnd = windowStart + WINDOW_TICKS * 1000;

  await until(10_000);
  await rollingRestart();
  await until(55_000);
  const victim = running[1]!;
  await victim.kill();
  running.splice(running.indexOf(victim), 1);
  note(`${victim.name} killed (SIGKILL)`);
  await start();
  note(`${all.at(-1)!.name} started`);
  await until(70_000);
  await rollingRestart();
  await until(WINDOW_TICKS * 1000);
  note('window closed');

  const windowTick = (tick: string) => Date.parse(tick) >= windowStart && Date.parse(tick) < windowEnd;
  await waitFor(
    'every tick of the window handled',
    () =>
      new Set(
        handled()
          .map((d) => d.tick)
          .filter(windowTick),
      ).size >= WINDOW_TICKS,
    30_000,
  );
  await Promise.all(running.splice(0).map((instance) => instance.stop()));

  const rows = await outboxTicks();
  // Firings: one outbox row per tick, every second from the first to the last, 120 of them in the window.
  expect(rows.filter((row) => row.n !== 1)).toEqual([]);
  const ticks = rows.map((row) => Date.parse(row.tick));
  expect(ticks.slice(1).filter((tick, index) => tick - ticks[index]! !== 1000)).toEqual([]);
  expect(ticks[0]).toBeLessThanOrEqual(windowStart);
  expect(rows.filter((row) => windowTick(row.tick))).toHaveLength(WINDOW_TICKS);

  // Deliveries: each tick of the window handled, and only with the message of its one firing (a redelivery,
  // after the kill -9 or a stop, carries the same meta.id).
  const deliveries = handled().sort((a, b) => a.at - b.at);
  const byTick = new Map<string, { ids: Set<string>; first: (typeof deliveries)[number] }>();
  for (const d of deliveries) {
    const seen = byTick.get(d.tick);
    if (seen) seen.ids.add(d.messageId);
    else byTick.set(d.tick, { ids: new Set([d.messageId]), first: d });
  }
  expect([...byTick.values()].filter((entry) => entry.ids.size !== 1)).toEqual([]);
  const inWindow = [...byTick.entries()].filter(([tick]) => windowTick(tick));
  expect(inWindow).toHaveLength(WINDOW_TICKS);

  const quantiles = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
    return { p50: at(0.5), p99: at(0.99), max: sorted.at(-1)! };
  };
  const figures = {
    name: 'every-second-120s-3-processes',
    client: onNative() ? 'native' : 'websocket',
    firings: WINDOW_TICKS,
    instancesStarted: all.length,
    redeliveries: deliveries.filter((d) => windowTick(d.tick)).length - WINDOW_TICKS,
    handledPerInstance: Object.fromEntries(
      all.map((i) => [i.name, i.deliveries().filter((d) => windowTick(d.tick)).length]),
    ),
    publishLateness: quantiles(inWindow.map(([tick, entry]) => entry.first.publishedAt - Date.parse(tick))),
    handlerLateness: quantiles(inWindow.map(([tick, entry]) => entry.first.at - Date.parse(tick))),
  };
  console.log([`[schedules] ${JSON.stringify(figures)}`, ...events].join('\n  '));
  fs.mkdirSync('test-results', { recursive: true });
  fs.appendFileSync('test-results/schedule-figures.jsonl', `${JSON.stringify(figures)}\n`);
});

test('every instance down for longer than missedAfterMs: the missed ticks fire once together (missed: once)', async () => {
  await Promise.all([start(), start()]);
  await waitFor('a few ticks handled', () => handled().length >= 3, 30_000);
  await Promise.all(running.splice(0).map((instance) => instance.kill())); // a full outage
  const downAt = Date.now();
  await sleep(15_000);
  await start(); // takes a few seconds more to start dispatching
  await waitFor('ticks after the outage', () => handled().some((d) => Date.parse(d.tick) > downAt + 15_000), 60_000);
  await sleep(3000);
  await Promise.all(running.splice(0).map((instance) => instance.stop()));

  const rows = await outboxTicks();
  expect(rows.filter((row) => row.n !== 1)).toEqual([]);
  const ticks = rows.map((row) => Date.parse(row.tick));
  // One jump: from the last tick before the outage to the one message for every tick missed (older than
  // missedAfterMs, 10 s, when the first pass ran again); then the recent ones each, every second.
  const jumps = ticks.slice(1).flatMap((tick, index) => (tick - ticks[index]! > 1000 ? [[ticks[index]!, tick]] : []));
  expect(jumps).toHaveLength(1);
  const [before, collapsed] = jumps[0]!;
  expect(before).toBeLessThanOrEqual(downAt);
  expect(collapsed - before).toBeGreaterThan(1000);
  expect(ticks.filter((tick) => tick > downAt).length).toBeLessThan((ticks.at(-1)! - downAt) / 1000);
  const ids = new Map<string, Set<string>>();
  for (const d of handled()) ids.set(d.tick, (ids.get(d.tick) ?? new Set()).add(d.messageId));
  expect([...ids.values()].filter((set) => set.size !== 1)).toEqual([]);
  console.log(
    `[schedules] every instance killed at ${new Date(downAt).toISOString()}, one started 15 s later: last tick ` +
      `before ${new Date(before).toISOString()}, one message for the missed ones at ${new Date(collapsed).toISOString()}`,
  );
});

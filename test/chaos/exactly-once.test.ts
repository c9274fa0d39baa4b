// Chaos: exactly-once effects (docs/exactly-once.md) under crashes, on the chaos broker (never the shared one) and
// the test PostgreSQL: 10,000 messages, two instances, one of them killed with SIGKILL mid-handler three times, the
// broker killed, kept down 15 s and restarted once, then 500 dead-letter records of ids already handled redriven
// (test/support/outbox/exactly-once-scenario.ts). Expected: 0 duplicate business rows, 0 lost, every message
// terminal; on the native client 0 duplicate follow-ups on the topic (the relay the broker deduplicates); the
// WebSocket API carries no sequence id, so there the duplicate follow-ups are counted and printed.
// BQ_EO_MESSAGES=<n> runs a smaller round.
import { jest } from '@jest/globals';
import { brokerSettings, restartBroker } from '../../scripts/lib/broker.mjs';
import { onNative, testClientKind } from '../support/broker.js';
import { runExactlyOnce } from '../support/outbox/exactly-once-scenario.js';
import { chaosClient, chaosWebUrl } from './support/harness.js';

jest.setTimeout(1_800_000);

const MESSAGES = Number(process.env.BQ_EO_MESSAGES ?? 10_000);
const REDRIVEN = Math.min(500, MESSAGES);

it(`${MESSAGES} messages, two instances, kill -9 three times, a broker restart, a redrive of ${REDRIVEN} copies (${testClientKind()})`, async () => {
  const settings = brokerSettings({
    ...process.env,
    PULSAR_WEB_PORT: new URL(chaosWebUrl()).port,
    PULSAR_BROKER_PORT: process.env.BQ_CHAOS_BROKER_PORT ?? '16650',
  });
  const result = await runExactlyOnce({
    webUrl: chaosWebUrl(),
    serviceUrl: onNative() ? (process.env.BQ_CHAOS_SERVICE_URL ?? 'pulsar://127.0.0.1:16650') : chaosWebUrl(),
    client: () => chaosClient(),
    observer: () => chaosClient(chaosWebUrl()), // a URL: always the WebSocket client
    messages: MESSAGES,
    redriven: REDRIVEN,
    handlerMs: 5,
    plan: [
      { share: 0.15, what: 'kill -9 a', act: 'kill a' },
      { share: 0.35, what: 'kill -9 b', act: 'kill b' },
      // Down 15 s before it starts again: longer than the relay's send time-out (10 s), so sends time out while
      // their producers still hold them, and the reconnect back-off grows.
      {
        share: 0.5,
        what: 'broker kill -9, down 15 s, restart',
        act: () => restartBroker(settings, { kill: true, downMs: 15_000 }),
      },
      { share: 0.7, what: 'kill -9 a again', act: 'kill a' },
    ],
  });
  console.log(`[chaos] exactly once (${testClientKind()}): ${JSON.stringify(result)}`);
  expect(result.redriven).toBe(REDRIVEN);
  expect(result.businessRows).toBe(MESSAGES); // 0 duplicate business rows
  expect(result.distinctBusinessRows).toBe(MESSAGES); // 0 lost
  expect(result.inboxRows).toBe(MESSAGES);
  expect(result.outboxRows).toBe(MESSAGES); // one follow-up per order, once
  expect(result.followUpOrders).toBe(MESSAGES); // every follow-up reached the topic
  if (onNative()) expect(result.duplicateFollowUps).toBe(0);
});

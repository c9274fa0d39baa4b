// Exactly-once effects with instances killed mid-handler, on the shared broker (which is never restarted here: the
// broker restart is in test/chaos/exactly-once.test.ts) and the test PostgreSQL: two instances on one Shared
// subscription, each killed with SIGKILL once mid-handler and restarted, then dead-letter records of ids already
// handled redriven (test/support/outbox/exactly-once-scenario.ts). 0 duplicate business rows, 0 lost, every message
// terminal; on the native client 0 duplicate follow-ups on the topic; on WebSocket the duplicates are printed.
import { jest } from '@jest/globals';
import { newClient, newWebSocketClient, onNative, serviceUrl, testClientKind, webUrl } from '../../support/broker.js';
import { runExactlyOnce } from '../../support/outbox/exactly-once-scenario.js';

jest.setTimeout(600_000);

const MESSAGES = 1_000;
const REDRIVEN = 100;

test(`${MESSAGES} messages, two instances each killed with SIGKILL once mid-handler, ${REDRIVEN} copies redriven: each effect once`, async () => {
  const result = await runExactlyOnce({
    webUrl: webUrl(),
    serviceUrl: serviceUrl(),
    client: newClient,
    observer: newWebSocketClient,
    messages: MESSAGES,
    redriven: REDRIVEN,
    handlerMs: 20,
    plan: [
      { share: 0.25, what: 'kill -9 a', act: 'kill a' },
      { share: 0.6, what: 'kill -9 b', act: 'kill b' },
    ],
  });
  console.log(`instances killed (${testClientKind()}): ${JSON.stringify(result)}`);
  expect(result.redriven).toBe(REDRIVEN);
  expect(result.businessRows).toBe(MESSAGES);
  expect(result.distinctBusinessRows).toBe(MESSAGES);
  expect(result.inboxRows).toBe(MESSAGES);
  expect(result.outboxRows).toBe(MESSAGES);
  expect(result.followUpOrders).toBe(MESSAGES);
  if (onNative()) expect(result.duplicateFollowUps).toBe(0);
});

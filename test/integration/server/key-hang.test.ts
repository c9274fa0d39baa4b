// ordering 'key' through the real broker, on the client under test: a module-built app at concurrency 8 where one
// key's handler hangs 5 s. That key holds one slot; every other key's message is handled while it still hangs, and
// the hung key's next message runs only after it ends. Prints how many other-key messages finished during the hang.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler, EnvelopeCodec, type PulsarClientLike } from '../../../lib/index.js';
import { pulsarProperties, type PulsarProducer } from '../../../lib/pulsar/index.js';
import { backlog, newClient, sleep, testClientKind, uniqueTopic, waitFor } from '../../support/broker.js';
import { startService, type RunningService } from '../../support/nest-app.js';

jest.setTimeout(120_000);

const POSTED = 'urn:babel:ledger:hang';
const CONCURRENCY = 8;
const KEYS = 50;
const PER_KEY = 10;
const HANG_MS = 5000;

const seen = {
  hungRunning: false,
  hungEnded: false,
  /** Other-key messages finished while the hung handler ran. */
  duringHang: 0,
  others: 0,
  active: 0,
  /** Most other-key handlers running at once while the hung one ran. */
  peakBeside: 0,
  /** What ran of the hung key, in order, with whether the hung handler had ended. */
  hungKey: [] as string[],
};

@Controller()
class Ledger {
  @BabelHandler(POSTED)
  async posted(@Payload() { key, seq }: { key: string; seq: number }) {
    if (key === 'hung') {
      seen.hungKey.push(`${seq}${seen.hungEnded ? ' after' : ' during'}`);
      if (seq !== 0) return;
      seen.hungRunning = true;
      await sleep(HANG_MS);
      seen.hungRunning = false;
      seen.hungEnded = true;
      return;
    }
    seen.active += 1;
    if (seen.hungRunning) seen.peakBeside = Math.max(seen.peakBeside, seen.active);
    await sleep(1 + Math.random() * 2);
    seen.active -= 1;
    seen.others += 1;
    if (seen.hungRunning) seen.duringHang += 1;
  }
}

let client: PulsarClientLike;
let service: RunningService;
let topic: string;
let producer: PulsarProducer;

beforeAll(async () => {
  client = newClient();
  topic = uniqueTopic('key-hang');
  service = await startService([Ledger], {
    client,
    topics: topic,
    subscriptionType: 'KeyShared',
    ordering: 'key',
    concurrency: CONCURRENCY,
  });
  producer = await client.createProducer({ topic });
});
afterAll(async () => {
  await producer.close();
  await service.close();
  await client.close();
});

async function publish(key: string, seq: number): Promise<void> {
  const envelope = EnvelopeCodec.make(POSTED, { key, seq }, { queue: topic });
  await producer.send({
    data: EnvelopeCodec.encodeToBuffer(envelope),
    properties: pulsarProperties(envelope),
    partitionKey: key,
  });
}

it('a key whose handler hangs 5 s holds one slot: every other key is handled meanwhile', async () => {
  // A backlog first, the hung key's messages at its head, so that the hang starts before the rest comes in.
  await service.server.pause();
  await publish('hung', 0);
  await publish('hung', 1);
  for (let seq = 0; seq < PER_KEY; seq++)
    await Promise.all(Array.from({ length: KEYS }, (_, k) => publish(`acct-${k}`, seq)));
  service.server.resume();

  await waitFor('the hung handler started', () => seen.hungRunning, 30_000);
  await waitFor('the hung handler ended', () => seen.hungEnded, 30_000);
  const { duringHang, peakBeside } = seen;
  console.log(
    `[${testClientKind()}] key hung ${HANG_MS} ms at concurrency ${CONCURRENCY}: ${duringHang} of ` +
      `${KEYS * PER_KEY} other-key messages finished during the hang (peak ${peakBeside} handlers beside it)`,
  );
  // Every other key's message was handled while the hung one still ran: it held its slot, no more.
  expect(duringHang).toBe(KEYS * PER_KEY);
  expect(peakBeside).toBeLessThanOrEqual(CONCURRENCY - 1);
  await waitFor("the hung key's next message", () => seen.hungKey.length === 2);
  expect(seen.hungKey).toEqual(['0 during', '1 after']);
  await waitFor('the backlog drained', async () => (await backlog(topic)) === 0);
});

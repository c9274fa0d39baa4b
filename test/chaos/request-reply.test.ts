// Chaos: request/response (docs/request-response.md) across four app instances that share one subscription, each
// also a caller with its reply topic, while the broker is killed with SIGKILL and restarted on the same data. Every
// request gets its own reply (a call whose publish failed or timed out is sent again with the same id), and no reply
// reaches another call.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import { BabelHandler, BabelPulsarClient, type PulsarClientLike } from '../../lib/index.js';
import { brokerSettings, restartBroker } from '../../scripts/lib/broker.mjs';
import { startService, type RunningService } from '../support/nest-app.js';
import { chaosClient, chaosWebUrl } from './support/harness.js';

jest.setTimeout(300_000);
const URN = 'urn:babel:chaos:quote';
const INSTANCES = 4;
const PER_CALLER = 50;

@Controller()
class Quotes {
  @BabelHandler(URN)
  async quote(@Payload() data: { key: string }) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { key: data.key, handledBy: process.pid };
  }
}

interface Outcome {
  key: string;
  reply?: { key: string };
  tries: number;
  error?: string;
}

/** One request, sent again with the same id after a failed publish or a time-out (the handler may run twice). */
async function call(caller: BabelPulsarClient, key: string): Promise<Outcome> {
  const id = `${key}-id`;
  let error = '';
  for (let tries = 1; tries <= 4; tries++) {
    try {
      const reply = await lastValueFrom(caller.send<{ key: string }>(URN, { key }, { id, timeoutMs: 45_000 }));
      return { key, reply, tries };
    } catch (failure) {
      error = String(failure);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  return { key, tries: 4, error };
}

it('4 instances, one subscription, broker kill -9 and restart: every request answered, none misdelivered', async () => {
  const topic = `chaos-rpc-${Date.now()}`;
  const url = new URL(chaosWebUrl());
  const settings = brokerSettings({
    ...process.env,
    PULSAR_WEB_PORT: url.port,
    PULSAR_BROKER_PORT: process.env.BQ_CHAOS_BROKER_PORT ?? '16650',
  });
  const clients: PulsarClientLike[] = [];
  const services: RunningService[] = [];
  const callers: BabelPulsarClient[] = [];
  try {
    for (let i = 0; i < INSTANCES; i++) {
      const client = chaosClient();
      clients.push(client);
      services.push(await startService([Quotes], { client, topics: topic, concurrency: 4 }));
      const caller = new BabelPulsarClient({ client, topic, publishTimeoutMs: 60_000 });
      callers.push(caller);
      // Opens the reply topic before the chaos starts.
      await lastValueFrom(caller.send(URN, { key: `warm-${i}` }));
    }
    const calls: Array<Promise<Outcome>> = [];
    const fire = (from: number, to: number) => {
      for (let n = from; n < to; n++) callers.forEach((caller, i) => calls.push(call(caller, `c${i}-r${n}`)));
    };
    fire(0, PER_CALLER / 2);
    await restartBroker(settings, { kill: true });
    fire(PER_CALLER / 2, PER_CALLER);
    const outcomes = await Promise.all(calls);

    const lost = outcomes.filter((outcome) => outcome.reply === undefined);
    const misdelivered = outcomes.filter((outcome) => outcome.reply && outcome.reply.key !== outcome.key);
    const stats = callers.map((caller) => caller.replyStats);
    console.log(
      `request/response chaos: ${outcomes.length} requests, ${lost.length} lost, ${misdelivered.length} misdelivered, ` +
        `${outcomes.filter((o) => o.tries > 1).length} sent again; late replies dropped per caller: ` +
        stats.map(({ late }) => late).join(', '),
    );
    expect(lost).toEqual([]);
    expect(misdelivered).toEqual([]);
    expect(outcomes).toHaveLength(INSTANCES * PER_CALLER);
    // Every instance handled some of the requests: the subscription was shared.
    const handled = services.map((service) => service.settled.filter((event) => event.urn === URN).length);
    expect(handled.every((count) => count > 0)).toBe(true);
    expect(stats.every(({ waiting, unreadable }) => waiting === 0 && unreadable === 0)).toBe(true);
  } finally {
    await Promise.allSettled(callers.map((caller) => caller.close()));
    await Promise.allSettled(services.map((service) => service.close()));
    await Promise.allSettled(clients.map((client) => client.close()));
  }
});

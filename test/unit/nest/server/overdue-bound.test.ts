// The default bound on handlers past their time-out (twice concurrency): at the bound the consumer takes no new
// message (status stalled), and takes them again once one ends. Testing kit: no broker.
import { jest } from '@jest/globals';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler, EnvelopeCodec, type BabelServerStatus } from '../../../../lib/index.js';
import { pulsarProperties } from '../../../../lib/pulsar/index.js';
import { InMemoryPulsar } from '../../../../lib/testing/index.js';
import { startService } from '../../../support/nest-app.js';

jest.setTimeout(20_000);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

it('stops taking messages at twice concurrency overdue handlers, and goes on once one ends', async () => {
  const pulsar = new InMemoryPulsar();
  const started: number[] = [];
  const release: Array<() => void> = [];
  @Controller()
  class Hanging {
    @BabelHandler('urn:t:hang', { timeoutMs: 50 })
    async handle(@Payload() data: { n: number }) {
      started.push(data.n);
      await new Promise<void>((resolve) => release.push(resolve));
    }
  }
  const service = await startService([Hanging], { client: pulsar, topics: 'hangs', maxAttempts: 1 });
  const statuses: BabelServerStatus[] = [];
  service.server.status.subscribe((status) => statuses.push(status));
  try {
    const producer = await pulsar.createProducer({ topic: 'hangs' });
    for (let n = 1; n <= 5; n++) {
      const envelope = EnvelopeCodec.make('urn:t:hang', { n }, { queue: 'hangs' });
      await producer.send({ data: EnvelopeCodec.encodeToBuffer(envelope), properties: pulsarProperties(envelope) });
    }
    while (service.settled.length < 2) await sleep(10);
    await sleep(300);
    expect(started).toEqual([1, 2]);
    expect(service.server.describe()[0]).toMatchObject({ overdue: 2, active: 0 });
    while (!statuses.includes('stalled')) await sleep(10);
    release.shift()!();
    while (started.length < 3) await sleep(10);
    expect(started).toEqual([1, 2, 3]);
  } finally {
    release.splice(0).forEach((resolve) => resolve());
    await service.close();
  }
});

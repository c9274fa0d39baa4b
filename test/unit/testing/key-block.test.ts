// onExhausted 'block-key' given by a `handlers` entry, in a module-built app under the testing kit: a keyed message
// out of attempts blocks its key (nothing dead-lettered, other keys go on) until server.unblock() dead-letters it.
import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { BabelHandler, BabelPulsarClient, BabelPulsarServer, BabelQueueModule } from '../../../lib/index.js';
import { quietLogger, startUnderKit } from '../../support/nest-app.js';

const FROZEN = 'urn:babel:accounts:frozen';
const handled: string[] = [];

@Controller()
class Accounts {
  @BabelHandler(FROZEN)
  frozen(@Payload() { key, seq }: { key: string; seq: number }) {
    if (key === 'stuck' && seq === 0) throw new Error('never works');
    handled.push(`${key}/${seq}`);
  }
}

@Module({
  imports: [
    BabelQueueModule.forRoot({
      serviceUrl: 'pulsar://nowhere:6650',
      topic: 'accounts',
      logger: quietLogger,
      consumer: {
        ordering: 'key',
        maxAttempts: 2,
        concurrency: 4,
        handlers: { [FROZEN]: { onExhausted: 'block-key' } },
      },
    }),
  ],
  controllers: [Accounts],
})
class BlockingApp {}

async function until(done: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out (${handled.join(', ')})`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

it('blocks the key until server.unblock(), which dead-letters its message; other keys go on', async () => {
  const { pulsar, app } = await startUnderKit(BlockingApp);
  try {
    const babel = app.get(BabelPulsarClient);
    const server = app.get(BabelPulsarServer);
    for (const key of ['stuck', 'free'])
      for (let seq = 0; seq < 3; seq++) await babel.publish(FROZEN, { key, seq }, { key });
    await until(() => handled.includes('free/2') && server.describe()[0]?.blockedKeys?.length === 1);
    expect(server.describe()[0]).toMatchObject({ blockedKeys: ['stuck'], waitingInLanes: 3 });
    expect(handled.filter((id) => id.startsWith('stuck'))).toEqual([]);
    expect(pulsar.published('accounts.dlq')).toHaveLength(0);

    await expect(server.unblock('stuck', { topic: 'accounts', subscription: 'babelqueue' })).resolves.toMatchObject([
      { action: 'dead-letter', written: true },
    ]);
    await until(() => handled.includes('stuck/2'));
    expect(handled.filter((id) => id.startsWith('stuck'))).toEqual(['stuck/1', 'stuck/2']);
    expect(pulsar.published('accounts.dlq')).toHaveLength(1);
    expect(server.describe()[0]).toMatchObject({ blockedKeys: [], waitingInLanes: 0 });
  } finally {
    await app.close();
  }
});

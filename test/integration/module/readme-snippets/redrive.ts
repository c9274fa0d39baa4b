// README snippet: redrive from code. (The README imports from '@babelqueue/nestjs-pulsar'.)
import { BabelQueueRedrive } from '../../../../lib/index.js';
import { type RedriveItem, type RedriveResult } from '../../../../lib/redrive/index.js';

/** Sends the EU orders that failed back to their queue, marked as replays; reports each record. */
export async function redriveEuOrders(
  dlq = 'orders.dlq',
  report: (item: RedriveItem) => void = (item) => console.log(item.outcome, item.id, item.to),
): Promise<RedriveResult> {
  // Or inject BabelQueueRedrive (exported by BabelQueueModule), or new BabelQueueRedrive(client).
  const redrive = await BabelQueueRedrive.connect({ serviceUrl: process.env.PULSAR_URL ?? 'pulsar://localhost:6650' });
  try {
    return await redrive.run({
      topic: dlq,
      reason: 'failed',
      select: ({ envelope }) => envelope.data.region === 'eu', // after reason and urn
      max: 500,
      bypass: true, // handlers see ctx.isReplay() and can skip side effects that already happened
      onItem: report,
    });
  } finally {
    await redrive.close();
  }
}

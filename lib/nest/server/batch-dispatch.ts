import { BatchCollector, type BatchVerdict } from '../../consumer/batch-collector.js';
import { batchContextFor, type BabelBatchContext } from '../context/babel-batch.context.js';
import { withHandler } from '../context/babel.context.js';
import { describeNestFailure } from '../pipeline/failure-classify.js';
import type { BatchMember, Route } from './handler-routes.js';

/** Calls a batch handler with the payloads and the batch's context; rejects with the failure of the call. */
export type BatchCall = (route: Route, payloads: unknown[], context: BabelBatchContext) => Promise<void>;

/**
 * The batches of a server's batch handlers: one collector per handler. A message joins its handler's batch
 * after everything a single message goes through before the handler (inspection, schema, idempotency), and the
 * promise `add` returns settles that message alone.
 */
export class BatchDispatch {
  /** Every collector made so far (each also sits on its route: one batch per handler, across its topics). */
  private readonly collectors: Array<BatchCollector<BatchMember>> = [];
  private closed = false;

  constructor(private readonly call: BatchCall) {}

  /** Resolves when the message succeeded in its batch; rejects with its own failure (or the whole batch's). */
  add(route: Route, member: BatchMember): Promise<void> {
    return this.collectorOf(route).add(member);
  }

  /** Hands over every waiting batch now, and each later message at once (the server is stopping). */
  close(): void {
    this.closed = true;
    for (const collector of this.collectors) collector.close();
  }

  private collectorOf(route: Route): BatchCollector<BatchMember> {
    let collector = route.batchCollector;
    if (collector) return collector;
    const options = route.batch;
    if (!options) throw new Error(`${route.name} is not a batch handler`);
    collector = new BatchCollector<BatchMember>(options, (members) => this.runBatch(route, members));
    if (this.closed) collector.close();
    this.collectors.push(collector);
    route.batchCollector = collector;
    return collector;
  }

  private async runBatch(route: Route, members: readonly BatchMember[]): Promise<BatchVerdict> {
    const { context, failed } = batchContextFor(members.map((member) => member.context));
    withHandler(context, route.declaredAt);
    await this.call(
      route,
      members.map((member) => member.payload),
      context,
    );
    // What the handler reported per message is classified as a thrown failure of that message would be.
    return { failed: new Map([...failed].map(([index, error]) => [index, describeNestFailure(error)])) };
  }
}

import { BaseRpcContext } from '@nestjs/microservices';
import { lateSettleError } from '../../consumer/settle-request.js';
import { wasSettled, type BabelContext } from './babel.context.js';

type BabelBatchContextArgs = [messages: readonly BabelContext[], failed: Map<number, unknown>];

/**
 * The `@Ctx()` of a batch handler (`@BabelHandler(urn, { batch })`): message `i` of the batch is payload `i`. Each
 * message is settled on its own once the handler returns: the ones passed to `fail()` are retried or
 * dead-lettered as a failure of a single-message handler would be, the others are acknowledged. A handler that
 * throws fails every message of the batch with that error.
 */
export class BabelBatchContext extends BaseRpcContext<BabelBatchContextArgs> {
  /** How many messages the batch holds. */
  get size(): number {
    return this.args[0].length;
  }

  /** Each message's own context (envelope, properties, attempts, topic), in the order of the payloads. */
  getMessages(): readonly BabelContext[] {
    return this.args[0];
  }

  /** The context of message `index` of the batch. */
  getMessage(index: number): BabelContext {
    return this.args[0][this.checkIndex(index)]!;
  }

  /**
   * Marks message `index` as failed with `error` (a BabelNonRetriableError dead-letters it at once; anything
   * else is retried under the usual rules). The last call for an index wins. Throws, as a late `ctx.retry()`
   * does, once that message was settled (the batch passed its time-out).
   */
  fail(index: number, error: unknown = new Error(`message ${index} of the batch failed`)): void {
    const checked = this.checkIndex(index);
    if (wasSettled(this.args[0][checked]!)) throw lateSettleError(`fail(${checked})`);
    this.args[1].set(checked, error);
  }

  /** The indexes marked as failed so far. */
  failedIndexes(): number[] {
    return [...this.args[1].keys()].sort((a, b) => a - b);
  }

  private checkIndex(index: number): number {
    if (!(Number.isInteger(index) && index >= 0 && index < this.size))
      throw new RangeError(`batch message index must be an integer from 0 to ${this.size - 1}, got ${String(index)}`);
    return index;
  }
}

/** A new batch context over `messages`; `failed` collects what the handler reports. */
export function batchContextFor(messages: readonly BabelContext[]): {
  context: BabelBatchContext;
  failed: Map<number, unknown>;
} {
  const failed = new Map<number, unknown>();
  return { context: new BabelBatchContext([messages, failed]), failed };
}

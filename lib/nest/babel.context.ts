import type { Type } from '@nestjs/common';
import { BaseRpcContext } from '@nestjs/microservices';
import type { Envelope } from '../envelope/index.js';
import type { PulsarMessage } from '../pulsar/client-types.js';
import { partitionOf } from '../pulsar/partition.js';
import { isReplay } from '../redrive/replay.js';

type BabelContextArgs = [envelope: Envelope, message: PulsarMessage, topic: string, urn: string];

/** Where a handler is declared: its controller class and method (what the failure relay needs to know). */
export interface HandlerRef {
  owner: Type<unknown>;
  method: string | symbol;
}

const HANDLER = Symbol('babelqueue.handler');

/** The context of a message for the handler `handler` (kept off the public type: the transport's own detail). */
export function contextFor(args: BabelContextArgs, handler: HandlerRef | undefined): BabelContext {
  return withHandler(new BabelContext(args), handler);
}

/** Records which handler a context (single or batch) is made for, for the failure relay. */
export function withHandler<C extends object>(context: C, handler: HandlerRef | undefined): C {
  (context as unknown as Record<typeof HANDLER, HandlerRef | undefined>)[HANDLER] = handler;
  return context;
}

export function handlerOf(context: object): HandlerRef | undefined {
  return (context as unknown as Record<typeof HANDLER, HandlerRef | undefined>)[HANDLER];
}

/** The `@Ctx()` of a @BabelHandler method. */
export class BabelContext extends BaseRpcContext<BabelContextArgs> {
  /** The decoded envelope, with attempts reconciled from bq-attempts, the body and the redelivery count. */
  getEnvelope(): Envelope {
    return this.args[0];
  }

  /** The raw Pulsar message (native or WebSocket client). */
  getMessage(): PulsarMessage {
    return this.args[1];
  }

  /** Every property of the message, the bq-* projection and any extra headers. */
  getProperties(): Record<string, string> {
    return this.args[1].getProperties();
  }

  /** The URN that routed the message (bq-job, else the body's). */
  getUrn(): string {
    return this.args[3];
  }

  getTraceId(): string {
    return this.args[0].trace_id;
  }

  /** Reconciled attempts: 0 on a first delivery, n after n earlier failed deliveries. */
  getAttempts(): number {
    return this.args[0].attempts;
  }

  /**
   * The topic the message was consumed from, as configured: on a partitioned topic the logical name (`orders`),
   * never one partition. `getPartition()` tells which partition the message came from.
   */
  getTopic(): string {
    return this.args[2];
  }

  /** The partition the message came from, -1 on a non-partitioned topic (the same on both clients). */
  getPartition(): number {
    return partitionOf(this.args[1].getTopicName());
  }

  /** The message's partition key ('' when it has none): what Key_Shared and partition routing use. */
  getPartitionKey(): string {
    return this.args[1].getPartitionKey();
  }

  /**
   * True when an operator redrove this message with `bypass` (the `bq-replay-bypass` property): the handler should
   * skip external side effects that already happened the first time.
   */
  isReplay(): boolean {
    return isReplay(this.args[1].getProperties());
  }
}

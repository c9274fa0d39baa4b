import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { isObservable, lastValueFrom } from 'rxjs';
import type { ConsumerLogger } from '../../consumer/index.js';
import { RequestedSettlement, type SettleRequests } from '../../consumer/settle-request.js';
import type { Envelope } from '../../envelope/index.js';
import { isClaimStore } from '../../idempotency/claim-store.js';
import { runClaimed } from '../../idempotency/run-claimed.js';
import { duplicateSkippedLine, runOnce } from '../../idempotency/run-once.js';
import type { ConsumerMetrics } from '../../otel/metrics.js';
import { inProcessSpan, openTelemetry, tracingObserved } from '../../otel/tracing.js';
import type { PulsarMessage } from '../../pulsar/client-types.js';
import { messageIdText } from '../../pulsar/message-id.js';
import { handlerPayload } from '../../schema/message-payload.js';
import type { BabelBatchContext } from '../context/babel-batch.context.js';
import { contextFor, withTransaction, type BabelContext } from '../context/babel.context.js';
import { failureOf, unrelayedFailureOf } from '../pipeline/failure-classify.js';
import type { BabelFailureRelay } from '../pipeline/failure-relay.js';
import { BatchDispatch } from './batch-dispatch.js';
import type { Route } from './handler-routes.js';
import type { ResolvedServerOptions } from './server-options.js';

/**
 * Runs `work` (one handler call) between Nest's processing hooks (`setOnProcessingStartHook` /
 * `setOnProcessingEndHook`), as Nest's own transports do; resolves or rejects as `work` does.
 */
export type ProcessingHooks = (context: BabelContext | BabelBatchContext, work: () => Promise<void>) => Promise<void>;

export interface HandlerDispatchDeps {
  settings: ResolvedServerOptions;
  logger: ConsumerLogger;
  metrics(): ConsumerMetrics | undefined;
  processing: ProcessingHooks;
}

/**
 * From a routed message to its handler: the payload (schema, decryption), idempotency, spans and metrics, the
 * batch of a batch handler, Nest's processing hooks, then the call itself (direct, or through Nest's pipeline).
 * Rejects with the failure the settlement classifies.
 */
export class HandlerDispatch {
  private readonly batches = new BatchDispatch((route, payloads, context) =>
    this.deps.processing(context, async () => {
      await HandlerDispatch.invoke(route, payloads, context);
    }),
  );

  constructor(private readonly deps: HandlerDispatchDeps) {}

  /** Which handlers can be called without Nest's pipeline: those with nothing for it to run. */
  planDirectCalls(routes: Iterable<Route>, relays: Iterable<BabelFailureRelay>): void {
    for (const route of routes) {
      const { declaredAt } = route;
      if (!declaredAt || route.direct) continue;
      for (const relay of relays) {
        const call = relay.directCallOf(declaredAt);
        if (call) {
          route.direct = { call, relay };
          break;
        }
      }
    }
  }

  /** Hands over every waiting batch now, and each later message at once (the server is stopping). */
  close(): void {
    this.batches.close();
  }

  async dispatch(
    route: Route,
    urn: string,
    envelope: Envelope,
    message: PulsarMessage,
    topic: string,
    requests: SettleRequests,
    where: {
      /** What `ctx.getTopic()` says (spans and metrics keep `topic`). */
      reportedTopic?: string;
      /** The subscription, which names the message's record in the inbox. */
      subscription?: string;
    } = {},
  ): Promise<unknown> {
    const { settings, processing } = this.deps;
    const reportedTopic = where.reportedTopic ?? topic;
    const { declaredAt, schema, ownIdempotency, batch } = route;
    const context = contextFor([envelope, message, reportedTopic, urn], declaredAt, requests);
    // What the handler returned: the reply when the message is a request (a batch handler's members reply empty).
    let result: unknown;
    const run = async (): Promise<void> => {
      let payload: unknown;
      try {
        payload = handlerPayload(urn, envelope.data, schema, settings.cipher);
      } catch (reported) {
        throw declaredAt ? failureOf(reported) : unrelayedFailureOf(reported);
      }
      if (batch) await this.batches.add(route, { payload, context });
      else
        await processing(context, async () => {
          result = await HandlerDispatch.invoke(route, payload, context);
        });
      // Asked for a retry or a dead letter: not handled, for what wraps the handler (idempotency, metrics, spans).
      if (requests.requested !== null) throw new RequestedSettlement(requests.requested);
    };
    // A handler with a store of its own (@Idempotent) is governed by that store alone.
    const idempotency = ownIdempotency ? undefined : settings.idempotency;
    const once = async (): Promise<void> => {
      if (!idempotency) return run();
      const { store } = idempotency;
      const id: unknown = envelope.meta?.id;
      // A claim store locks the id while the handler runs; run() throws on a retry or dead-letter request.
      const outcome = isClaimStore(store) ? await runClaimed(store, id, run) : await runOnce(store, id, run);
      if (outcome === 'duplicate') {
        requests.markDuplicate();
        this.deps.logger.log(duplicateSkippedLine(urn, envelope.meta.id));
      }
    };
    const inbox = settings.inbox && (route.inbox ?? settings.inbox.every ?? false) ? settings.inbox.store : undefined;
    const work = !inbox
      ? once
      : async (): Promise<void> => {
          const id: unknown = envelope.meta?.id;
          // The handler runs inside the inbox's transaction; a retry or dead-letter request (thrown by run) rolls
          // it back, as a failure does.
          const outcome = await inbox.run(
            where.subscription ?? '',
            typeof id === 'string' && id !== '' ? id : undefined,
            async (transaction) => {
              withTransaction(context, transaction);
              try {
                await once();
              } finally {
                withTransaction(context, undefined);
              }
            },
          );
          if (outcome === 'duplicate') {
            requests.markDuplicate();
            this.deps.logger.log(duplicateSkippedLine(urn, id, 'inbox'));
          }
        };
    // The span helpers use the process-wide API once any component loaded it, so "off" must bypass them here.
    const api = settings.telemetry.tracing ? openTelemetry() : null;
    const traced = !(api && tracingObserved(api))
      ? work
      : () =>
          inProcessSpan(
            {
              urn,
              topic,
              envelope,
              properties: message.getProperties(),
              pulsarMessageId: messageIdText(message.getMessageId()),
            },
            work,
          );
    const metrics = this.deps.metrics();
    await (metrics ? metrics.around(topic, urn, traced) : traced());
    return result;
  }

  /**
   * Calls a handler (directly or through Nest's pipeline) and resolves to what it returned (an Observable's last
   * value); rejects with the failure the settlement classifies.
   */
  private static async invoke(
    { handler, declaredAt, direct }: Route,
    payload: unknown,
    context: BabelContext | BabelBatchContext,
  ): Promise<unknown> {
    try {
      const result: unknown = direct
        ? await HandlerDispatch.callDirectly(direct, payload, context)
        : await handler(payload, context);
      // Nest hands a failure to the exception filters, whose verdict is an Observable: an error (the failure
      // relay's, or a user filter's) or a completion (a user filter took the failure as handled). An interceptor
      // or a handler that returns an Observable also answers with its last value.
      return isObservable(result) ? await lastValueFrom(result, { defaultValue: undefined }) : result;
    } catch (reported) {
      throw declaredAt ? failureOf(reported) : unrelayedFailureOf(reported);
    }
  }

  /** Calls a handler directly; a failure goes to the user's exception filters as through Nest's pipeline. */
  private static async callDirectly(
    { call, relay }: NonNullable<Route['direct']>,
    data: unknown,
    context: unknown,
  ): Promise<unknown> {
    try {
      const result = await call(data, context);
      return isObservable(result) ? await lastValueFrom(result, { defaultValue: undefined }) : result;
    } catch (error) {
      const host = new ExecutionContextHost([data, context]);
      host.setType('rpc');
      return relay.catch(error, host);
    }
  }
}

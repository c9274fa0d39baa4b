// Request/response over BabelQueue envelopes (docs/request-response.md): the request is published like any message,
// with the reply topic and a correlation id; the reply comes back through the client's reply inbox.
import { randomUUID } from 'node:crypto';
import { Observable } from 'rxjs';
import { BabelQueueError } from '../../envelope/index.js';
import { RequestFailedError, RequestTimeoutError } from '../../envelope/request-errors.js';
import { BQ_REPLY } from '../../pulsar/reply-binding.js';
import { isUrnContract } from '../../schema/urn-contract.js';
import { checkTimeout, describe } from './client-options.js';
import type { PublishOptions } from './publish-message.js';
import type { ReplyInbox } from './reply-inbox.js';

/** The options of `send(urn, data, options)`: those of a publish, with `timeoutMs` the wait for the reply. */
export interface RequestOptions extends Omit<PublishOptions, 'timeoutMs'> {
  /** How long to wait for the reply; default the client's `requestTimeoutMs` (30000 ms). */
  timeoutMs?: number;
}

/** What a request needs of its client. */
export interface RequestDeps {
  assertOpen(): void;
  /** The client's reply inbox (created on first use). */
  inbox(): ReplyInbox;
  defaultTimeoutMs: number;
  /** Publishes the request envelope (tracked by the client, so close() waits for it). */
  publish(urn: string, data: unknown, options: PublishOptions): Promise<string>;
}

/**
 * The Observable of one request: cold (nothing is sent until it is subscribed), it emits the reply's result and
 * completes, or errors with the handler's failure, the time-out or the publish's own error. Unsubscribing stops the
 * wait; a reply that comes later is dropped and counted by the inbox.
 */
export function requestReply<TResult>(
  deps: RequestDeps,
  pattern: unknown,
  data: unknown,
  options: RequestOptions | undefined,
): Observable<TResult> {
  return new Observable<TResult>((subscriber) => {
    let stopWaiting = (): void => undefined;
    let timer: NodeJS.Timeout | undefined;
    const end = () => {
      clearTimeout(timer);
      stopWaiting();
    };
    const fail = (error: unknown) => {
      end();
      subscriber.error(error);
    };
    const request = async () => {
      deps.assertOpen();
      const { urn, options: given } = requestArguments(pattern, options);
      const timeoutMs = given.timeoutMs === undefined ? deps.defaultTimeoutMs : checkRequestTimeout(given.timeoutMs);
      const inbox = deps.inbox();
      await inbox.open();
      if (subscriber.closed) return;
      const id = given.id ?? randomUUID();
      const correlationId = randomUUID();
      stopWaiting = inbox.expect(correlationId, (body) => {
        end();
        if (body.status === 'error') {
          subscriber.error(new RequestFailedError(body.error.message, body.error.class, urn, id));
          return;
        }
        if (body.result !== undefined) subscriber.next(body.result as TResult);
        subscriber.complete();
      });
      timer = setTimeout(() => fail(new RequestTimeoutError(urn, id, timeoutMs)), timeoutMs);
      const { timeoutMs: _wait, ...publish } = given;
      const headers = {
        ...publish.headers,
        [BQ_REPLY.replyTo]: inbox.topic,
        [BQ_REPLY.correlationId]: correlationId,
      };
      await deps.publish(urn, data, { ...publish, id, headers });
    };
    request().catch(fail);
    return end;
  });
}

/** send()'s URN and options, from a URN or a contract (whose schema the request is validated against). */
function requestArguments(
  pattern: unknown,
  options: RequestOptions | undefined,
): { urn: string; options: RequestOptions } {
  if (options !== undefined && (options === null || typeof options !== 'object'))
    throw new BabelQueueError('send options must be an object');
  if (isUrnContract(pattern)) {
    const schema = options?.schema ?? pattern.schema;
    return { urn: pattern.urn, options: { ...options, ...(schema !== undefined && { schema }) } };
  }
  if (typeof pattern !== 'string' || pattern.trim() === '')
    throw new BabelQueueError(`send() takes a URN string (or a contract) as its pattern, got ${describe(pattern)}`);
  return { urn: pattern, options: options ?? {} };
}

function checkRequestTimeout(value: unknown): number {
  const checked = checkTimeout(value, 'options.timeoutMs');
  if (checked === 0) throw new BabelQueueError('options.timeoutMs of send() must be above 0');
  return checked;
}

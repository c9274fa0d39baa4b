import { HttpException } from '@nestjs/common';
import { RpcException } from '@nestjs/microservices';
import { BabelNonRetriableError } from '../../envelope/index.js';

/** What Nest reports when a guard returns false (its FORBIDDEN_MESSAGE, raised as an RpcException). */
const GUARD_DENIAL = 'Forbidden resource';

/**
 * What the failure relay hands back when none of the user's exception filters took a failure: the exception
 * exactly as the handler, a pipe, a guard or an interceptor (of any level) threw it.
 */
export class RelayedFailure {
  constructor(readonly cause: unknown) {}
}

// Failures the Nest layer has judged not worth retrying (4xx HttpExceptions, guard denials), by identity.
const notRetriable = new WeakSet<object>();

/**
 * 4xx means "this request is wrong" and will be wrong again, except 408 (Request Timeout) and 429 (Too Many
 * Requests), which say "not now" and are worth a retry.
 */
function isClientError(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/** The full text of an HttpException: `ValidationPipe`'s constraint messages rather than "Bad Request Exception". */
export function httpExceptionDetail(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (Array.isArray(message)) return message.map((part) => String(part)).join('; ');
  if (typeof message === 'string') return message;
  return exception.message;
}

/** The text of an RPC error value: a string, or the `message` of an object such as `{ status, message }`. */
function rpcErrorText(value: unknown): string {
  if (typeof value === 'string') return value;
  const message = (value as { message?: unknown } | null)?.message;
  if (typeof message === 'string') return message;
  return JSON.stringify(value) ?? String(value);
}

/** An Error named `RpcException` for an RPC error value, keeping what it was as `cause`. */
function rpcError(text: string, cause: unknown, stack?: string): Error {
  const described = new Error(text, { cause });
  described.name = 'RpcException';
  if (stack !== undefined) described.stack = stack;
  // A guard denial will be denied again: not worth a retry.
  if (text === GUARD_DENIAL) notRetriable.add(described);
  return described;
}

/**
 * What the settlement sees of a failed Nest handler. An HttpException becomes an Error with the same name, its
 * full detail as message and the exception as `cause`, a 4xx one marked not retriable; an RpcException an Error
 * named RpcException with its error's text; anything else stays as it was thrown (even a non-Error).
 */
export function describeNestFailure(cause: unknown): unknown {
  if (cause instanceof RpcException) return rpcError(rpcErrorText(cause.getError()), cause, cause.stack);
  if (!(cause instanceof HttpException)) return cause;
  const described = new Error(httpExceptionDetail(cause), { cause });
  described.name = cause.name;
  if (cause.stack !== undefined) described.stack = cause.stack;
  if (isClientError(cause.getStatus())) notRetriable.add(described);
  return described;
}

/**
 * The failure of a @BabelHandler call, from what the call rejected with: the exception the failure relay handed
 * back, or whatever a user's exception filter threw or returned as an error, as it is.
 */
export function failureOf(reported: unknown): unknown {
  return describeNestFailure(reported instanceof RelayedFailure ? reported.cause : reported);
}

/**
 * The failure of a pattern registered without @BabelHandler: Nest's default filter replaced the exception with an
 * RPC error value (`{ status, message }`), reported as an RpcException with that text.
 */
export function unrelayedFailureOf(reported: unknown): unknown {
  if (reported instanceof Error) return describeNestFailure(reported);
  return rpcError(rpcErrorText(reported), reported);
}

/**
 * The server's default classification: a BabelNonRetriableError, a 4xx HttpException (not 408/429) and a guard
 * denial go to the dead-letter topic at once; anything else is retried up to maxAttempts.
 */
export function isRetriableNestFailure(error: unknown): boolean {
  if (error instanceof BabelNonRetriableError) return false;
  if (typeof error === 'object' && error !== null && notRetriable.has(error)) return false;
  if (error instanceof HttpException) return !isClientError(error.getStatus());
  return true;
}

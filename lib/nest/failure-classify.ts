import { HttpException } from '@nestjs/common';
import { BabelNonRetriableError } from '../envelope/index.js';

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

/**
 * What the settlement sees of a failed Nest handler. An HttpException becomes an Error with the same name, its
 * full detail as message and the exception as `cause`; a 4xx one is marked not retriable.
 */
export function describeNestFailure(cause: unknown): unknown {
  if (!(cause instanceof HttpException)) return cause;
  const described = new Error(httpExceptionDetail(cause), { cause });
  described.name = cause.name;
  if (cause.stack !== undefined) described.stack = cause.stack;
  if (isClientError(cause.getStatus())) notRetriable.add(described);
  return described;
}

/** Marks a failure as not retriable (a guard denial, which reaches the server only as a reported text). */
export function markNotRetriable<T extends object>(failure: T): T {
  notRetriable.add(failure);
  return failure;
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

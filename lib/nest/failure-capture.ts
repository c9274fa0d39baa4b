import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { catchError, throwError, type Observable } from 'rxjs';
import { markNotRetriable } from './failure-classify.js';

/** What Nest reports when a guard returns false (core's FORBIDDEN_MESSAGE, raised as an RpcException). */
const GUARD_DENIAL = 'Forbidden resource';

// Nest's default RPC exception filter turns an unknown error into { status, message: 'Internal server error' },
// which would leave dead-letter records without the real cause. This interceptor, added by @BabelHandler,
// remembers what the handler (or a pipe / method interceptor) threw, keyed by the message's context.
const captured = new WeakMap<object, unknown>();

export class FailureCaptureInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const key = context.switchToRpc().getContext<object>();
    return next.handle().pipe(
      catchError((error: unknown) => {
        if (typeof key === 'object' && key !== null) captured.set(key, error);
        return throwError(() => error);
      }),
    );
  }
}

export const failureCapture = new FailureCaptureInterceptor();

/**
 * What a failed handler really threw — kept as it was, even when it is not an Error (`throw 'text'`,
 * `Promise.reject(undefined)`), so Decision D2 can report its message and name or null. Falls back to
 * what Nest's pipeline reported when the interceptor never saw the failure (a guard or global pipe).
 */
export function failureCause(context: object, reported: unknown): unknown {
  if (captured.has(context)) return captured.get(context);
  if (reported instanceof Error) return reported;
  // RpcException filters report strings or plain objects.
  const text =
    typeof reported === 'string'
      ? reported
      : typeof reported === 'object' &&
          reported !== null &&
          typeof (reported as { message?: unknown }).message === 'string'
        ? (reported as { message: string }).message
        : (JSON.stringify(reported) ?? String(reported));
  const error = new Error(text);
  error.name = 'RpcException';
  // A guard denial will be denied again: not worth a retry.
  if (text === GUARD_DENIAL) markNotRetriable(error);
  return error;
}

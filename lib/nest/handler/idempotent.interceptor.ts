import { UseInterceptors, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { concat, defer, from, ignoreElements, lastValueFrom, mergeMap, of, type Observable } from 'rxjs';
import { PATTERN_EXTRAS_METADATA } from '@nestjs/microservices/constants.js';
import { BabelContext, markDuplicate, settleRequested } from '../context/babel.context.js';
import { BABEL_OWN_IDEMPOTENCY } from '../constants.js';
import { isClaimStore, type ClaimStore } from '../../idempotency/claim-store.js';
import { runClaimed } from '../../idempotency/run-claimed.js';
import { checkIdempotencyOptions, type IdempotencyOptions, type IdempotencyStore } from '../../idempotency/store.js';

/**
 * Per-handler idempotency as a Nest interceptor: a duplicate `meta.id` completes without calling the handler (so
 * the message is acknowledged); the id is remembered only once the handler's result completed without error and
 * without a `ctx.retry()` / `ctx.deadLetter()`. With a ClaimStore the id is claimed before the handler runs, so a
 * copy delivered meanwhile waits for the outcome (runClaimed) instead of running too.
 */
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(private readonly store: IdempotencyStore | ClaimStore) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const babel = context.switchToRpc().getContext<unknown>();
    if (!(babel instanceof BabelContext)) return next.handle(); // not a BabelQueue message
    const id: unknown = babel.getEnvelope().meta?.id;
    if (typeof id !== 'string' || id === '') return next.handle(); // fail open (docs/contract.md#idempotency)
    const store = this.store;
    if (isClaimStore(store)) {
      return defer(async () => {
        let result: unknown;
        const run = async () => {
          result = await lastValueFrom(next.handle(), { defaultValue: undefined });
        };
        // A handler that asked for a retry or a dead letter did not handle the message: its claim is released.
        const outcome = await runClaimed(store, id, run, { handled: () => !settleRequested(babel) });
        if (outcome === 'duplicate') markDuplicate(babel);
        return result;
      });
    }
    return from(Promise.resolve(store.seen(id))).pipe(
      mergeMap((seen) =>
        seen
          ? defer(() => {
              markDuplicate(babel);
              return of(undefined);
            })
          : concat(
              next.handle(),
              defer(async () => {
                // A handler that asked for a retry or a dead letter did not handle the message: its retry runs again.
                if (!settleRequested(babel)) await store.remember(id);
              }).pipe(ignoreElements()),
            ),
      ),
    );
  }
}

/**
 * Makes one handler idempotent: `@Idempotent({ store })` beside `@BabelHandler(...)`. Its store replaces the
 * module-wide one for this handler (the server sees the mark in the pattern extras, which Nest merges whichever
 * decorator runs first).
 */
export function Idempotent(options: IdempotencyOptions): MethodDecorator {
  checkIdempotencyOptions(options, '@Idempotent options');
  const intercept = UseInterceptors(new IdempotencyInterceptor(options.store));
  return (target, key, descriptor) => {
    const method = descriptor.value as object;
    Reflect.defineMetadata(
      PATTERN_EXTRAS_METADATA,
      { ...Reflect.getMetadata(PATTERN_EXTRAS_METADATA, method), [BABEL_OWN_IDEMPOTENCY]: true },
      method,
    );
    return intercept(target, key, descriptor);
  };
}

import type { BaseRpcContext, Transport } from '@nestjs/microservices';
import type { BabelBatchContext } from '../context/babel-batch.context.js';
import type { BabelContext } from '../context/babel.context.js';
import type { ProcessingHooks } from './handler-dispatch.js';

type TransportId = Transport | symbol;
/** Nest's start hook: it calls `done` to run the handler. */
export type StartHook = (transportId: TransportId, context: BaseRpcContext, done: () => Promise<unknown>) => unknown;
export type EndHook = (transportId: TransportId, context: BaseRpcContext) => unknown;

/** The server's processing hooks as Nest set them (`setOnProcessingStartHook` / `setOnProcessingEndHook`). */
export interface ProcessingHookHost {
  start: StartHook | undefined;
  end: EndHook | undefined;
  transportId: TransportId;
  /** What `this` is in the hooks (the server). */
  self: object;
}

/**
 * Runs each handler call between Nest's processing hooks, as Nest's own transports do: the start hook gets a
 * `done` that runs the handler (a hook may wrap it, e.g. in an AsyncLocalStorage), the end hook runs once it
 * settled, either way. The settlement waits for the handler, not for what the start hook returns.
 */
export function nestProcessingHooks(host: () => ProcessingHookHost): ProcessingHooks {
  return (context: BabelContext | BabelBatchContext, work: () => Promise<void>) => {
    const { start, end, transportId, self } = host();
    if (typeof start !== 'function') return work();
    return new Promise<void>((resolve, reject) => {
      let ran: Promise<void> | null = null;
      const done = (): Promise<void> => {
        ran ??= work().finally(() => end?.call(self, transportId, context));
        ran.then(resolve, reject);
        return ran;
      };
      try {
        start.call(self, transportId, context, done);
      } catch (error) {
        reject(error as Error);
      }
    });
  };
}

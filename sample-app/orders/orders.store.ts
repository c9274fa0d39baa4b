import { Injectable } from '@nestjs/common';
import type { SettledEvent } from '@babelqueue/nestjs-pulsar';

export interface HandledMessage {
  urn: string;
  messageId: string;
  traceId: string;
  attempts: number;
  /** ctx.isReplay(): re-published by a redrive run with --bypass. */
  replay: boolean;
  data: Record<string, unknown>;
  handledAt: number;
}

/** What the handlers did and how the server settled each delivery (the sample keeps it in memory). */
@Injectable()
export class OrdersStore {
  readonly handled: HandledMessage[] = [];
  /** Registered customer ids: app state an order depends on, changed at runtime over HTTP. */
  readonly customers = new Set<string>();
  readonly settlements: Array<SettledEvent & { at: number }> = [];
  readonly rejected: Array<{ error: string; messageId: string | null; at: number }> = [];
}

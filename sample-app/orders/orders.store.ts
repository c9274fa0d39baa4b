import { Injectable } from '@nestjs/common';
import type { SettledEvent } from '@babelqueue/nestjs-pulsar';

export interface HandledMessage {
  urn: string;
  messageId: string;
  traceId: string;
  attempts: number;
  data: Record<string, unknown>;
  handledAt: number;
}

/** What the handlers did and how the server settled each delivery (the sample keeps it in memory). */
@Injectable()
export class OrdersStore {
  readonly handled: HandledMessage[] = [];
  readonly settlements: Array<SettledEvent & { at: number }> = [];
  readonly rejected: Array<{ error: string; messageId: string | null; at: number }> = [];
}

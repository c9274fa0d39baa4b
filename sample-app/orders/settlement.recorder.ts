import { Injectable, type OnModuleInit } from '@nestjs/common';
import { BabelPulsarServer } from '@babelqueue/nestjs-pulsar';
import { OrdersStore } from './orders.store.js';

/** Listens to the server's `settled` events (ack, retry, dead-letter, drop, nack) for GET /settlements. */
@Injectable()
export class SettlementRecorder implements OnModuleInit {
  constructor(
    private readonly server: BabelPulsarServer,
    private readonly store: OrdersStore,
  ) {}

  onModuleInit(): void {
    this.server.on('settled', (event) => this.store.settlements.push({ ...event, at: Date.now() }));
  }
}

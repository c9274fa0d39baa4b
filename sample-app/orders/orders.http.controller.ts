import { Body, Controller, Get, HttpCode, Inject, Post, Query } from '@nestjs/common';
import { BabelPulsarClient } from '@babelqueue/nestjs-pulsar';
import { SAMPLE_CONFIG } from '../tokens.js';
import type { SampleConfig } from '../config.js';
import { DeadLetterReader } from './dead-letter.reader.js';
import { OrdersStore } from './orders.store.js';

/** The HTTP side of the sample: publishes events and shows what happened to them. */
@Controller()
export class OrdersHttpController {
  constructor(
    private readonly publisher: BabelPulsarClient,
    private readonly store: OrdersStore,
    private readonly deadLetters: DeadLetterReader,
    @Inject(SAMPLE_CONFIG) private readonly config: SampleConfig,
  ) {}

  /** Publishes urn:babel:orders:created; `?delayMs=` schedules it. Returns the message id. */
  @Post('orders')
  @HttpCode(202)
  async create(@Body() order: Record<string, unknown>, @Query('delayMs') delayMs?: string) {
    const delay = delayMs === undefined ? undefined : Number(delayMs);
    const id = await this.publisher.publish('urn:babel:orders:created', order, {
      ...(delay !== undefined && { delay }),
    });
    return { id };
  }

  /** Publishes urn:babel:payments:charge (its handler fails twice before it succeeds). */
  @Post('payments')
  @HttpCode(202)
  async charge(@Body() payment: Record<string, unknown>) {
    return { id: await this.publisher.publish('urn:babel:payments:charge', payment) };
  }

  /** What the handlers recorded. */
  @Get('orders')
  handled() {
    return this.store.handled;
  }

  /** How the server settled each delivery, and what the schema-version gate refused. */
  @Get('settlements')
  settlements() {
    return { settlements: this.store.settlements, rejected: this.store.rejected };
  }

  /** The records on `<topic>.dlq`, read from the broker. */
  @Get('dead-letters')
  async deadLettered() {
    return this.deadLetters.read(this.config.webUrl, `${this.config.topic}.dlq`);
  }
}

import { BadRequestException, Body, Controller, Get, HttpCode, Inject, Post, Query } from '@nestjs/common';
import { BabelPulsarClient, BabelQueueRedrive } from '@babelqueue/nestjs-pulsar';
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
    private readonly redrive: BabelQueueRedrive,
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

  /** Registers a customer: orders of theirs are taken from now on (dead-lettered ones once redriven). */
  @Post('customers')
  @HttpCode(201)
  register(@Body() body: Record<string, unknown>) {
    if (typeof body.id !== 'string' || body.id.trim() === '') throw new BadRequestException('id must be a string');
    this.store.customers.add(body.id);
    return { id: body.id };
  }

  @Get('customers')
  customers() {
    return [...this.store.customers];
  }

  /**
   * Sends the failed orders of one customer from `<topic>.dlq` back to the topic (after registering them); the
   * other records stay in the DLQ. Without `select`, orders that cannot succeed yet would fail and come back
   * while the run still reads. `dryRun: true` only reports (and creates the DLQ subscription when it is new).
   */
  @Post('dead-letters/redrive')
  @HttpCode(200)
  async redriveOrders(@Body() body: Record<string, unknown>) {
    const customer = body.customer;
    if (typeof customer !== 'string') throw new BadRequestException('customer must be a string');
    return this.redrive.run({
      topic: `${this.config.topic}.dlq`,
      reason: 'failed',
      urn: 'urn:babel:orders:created',
      select: ({ envelope }) => envelope.data.customer === customer,
      dryRun: body.dryRun === true,
    });
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

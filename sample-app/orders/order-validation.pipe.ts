import { BadRequestException, Injectable, type PipeTransform } from '@nestjs/common';
import type { OrderCreated } from './order.dto.js';

/** Rejects an order without a positive whole quantity; a rejection is a handler failure (retry, then .dlq). */
@Injectable()
export class OrderValidationPipe implements PipeTransform<Record<string, unknown>, OrderCreated> {
  transform(value: Record<string, unknown>): OrderCreated {
    const { order_id, sku, quantity, customer } = value;
    if (typeof order_id !== 'string' || typeof sku !== 'string') {
      throw new BadRequestException('order_id and sku must be strings');
    }
    if (typeof quantity !== 'number' || !Number.isInteger(quantity) || quantity < 1) {
      throw new BadRequestException(`quantity must be a positive integer, got ${JSON.stringify(quantity)}`);
    }
    if (customer !== undefined && typeof customer !== 'string') {
      throw new BadRequestException('customer must be a string');
    }
    return { order_id, sku, quantity, ...(customer !== undefined && { customer }) };
  }
}

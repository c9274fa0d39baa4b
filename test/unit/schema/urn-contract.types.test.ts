// Typed URN contracts: what compiles and what does not. `npx tsc --noEmit` checks the @ts-expect-error lines
// (an expected error that does not happen fails the typecheck); Jest checks the run-time side.
import { Controller } from '@nestjs/common';
import { BabelHandler, BabelPulsarClient, defineUrn, type PayloadOf } from '../../../lib/index.js';
import { isUrnContract } from '../../../lib/schema/index.js';

interface OrderCreated {
  order_id: number;
  currency: 'USD' | 'EUR';
}
const ORDER_CREATED = defineUrn<OrderCreated>(' urn:babel:orders:created ', {
  schema: { type: 'object', required: ['order_id'], properties: { order_id: { type: 'integer' } } },
});

// Compile-time only: never called.
export function publishes(client: BabelPulsarClient): void {
  void client.publish(ORDER_CREATED, { order_id: 1, currency: 'USD' });
  // @ts-expect-error a missing field
  void client.publish(ORDER_CREATED, { order_id: 1 });
  // @ts-expect-error a field of the wrong type
  void client.publish(ORDER_CREATED, { order_id: '1', currency: 'USD' });
  // @ts-expect-error a currency outside the union
  void client.publish(ORDER_CREATED, { order_id: 1, currency: 'GBP' });
  void client.publish('urn:babel:untyped', { anything: true }); // a plain URN stays untyped
  const payload: PayloadOf<typeof ORDER_CREATED> = { order_id: 2, currency: 'EUR' };
  void payload;
}

@Controller()
export class TypedHandlers {
  @BabelHandler(ORDER_CREATED)
  created(data: OrderCreated): number {
    return data.order_id;
  }

  @BabelHandler(ORDER_CREATED)
  wider(data: { order_id: number }): number {
    return data.order_id;
  }

  // @ts-expect-error the handler expects another payload shape
  @BabelHandler(ORDER_CREATED)
  wrong(data: { sku: string }): string {
    return data.sku;
  }
}

test('defineUrn trims the URN, keeps the schema and marks the contract', () => {
  expect(ORDER_CREATED.urn).toBe('urn:babel:orders:created');
  expect(ORDER_CREATED.schema).toEqual(expect.objectContaining({ required: ['order_id'] }));
  expect(isUrnContract(ORDER_CREATED)).toBe(true);
  expect(isUrnContract({ urn: 'x' })).toBe(false);
  expect(() => defineUrn(' ')).toThrow(/non-blank URN/);
  expect(() => defineUrn('u', { schema: { type: 'bogus' } })).toThrow(/not a valid JSON Schema/);
});

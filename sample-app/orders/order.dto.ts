// The shape of an order event, checked by OrderValidationPipe before the handler runs.
export interface OrderCreated {
  order_id: string;
  sku: string;
  quantity: number;
}

export interface PaymentCharge {
  order_id: string;
  amount: number;
}

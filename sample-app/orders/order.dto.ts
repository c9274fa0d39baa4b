// The shape of an order event, checked by OrderValidationPipe before the handler runs.
export interface OrderCreated {
  order_id: string;
  sku: string;
  quantity: number;
  /** Who ordered; when given, the customer must be registered (POST /customers) before the order is taken. */
  customer?: string;
}

export interface PaymentCharge {
  order_id: string;
  amount: number;
}

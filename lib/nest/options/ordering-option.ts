/** Whether a key's messages run in the order received (the `ordering` option of the server, handlers and `handlers`). */
export const ORDERINGS = ['key', 'none'] as const;
export type Ordering = (typeof ORDERINGS)[number];

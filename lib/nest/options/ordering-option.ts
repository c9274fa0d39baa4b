/** Whether a key's messages run in the order received (the `ordering` option of the server, handlers and `handlers`). */
export const ORDERINGS = ['key', 'none'] as const;
export type Ordering = (typeof ORDERINGS)[number];

/**
 * With `ordering: 'key'`, what becomes of a message whose handler failed for good (the `onExhausted` option of the
 * server, handlers and `handlers`): dead-lettered while its key goes on, or kept unacknowledged with its key
 * blocked until `unblock` (docs/scale.md#per-key-order).
 */
export const ON_EXHAUSTED = ['dead-letter', 'block-key'] as const;
export type OnExhausted = (typeof ON_EXHAUSTED)[number];

/**
 * Explicit, stable activity IDs, one per call site. They are half of every idempotency key,
 * so renaming one changes the keys of every run that has not reached it yet: treat them as a
 * public name.
 */
export const ActivityId = {
  recordOrder: 'record-order',
  chargePayment: 'charge-payment',
  /**
   * Settles an asynchronous payment; numbered per check (`settle-payment-1`, `-2`, ...). It
   * writes under the charge's key, so it derives no key of its own.
   */
  settlePayment: 'settle-payment',
  allocateStock: 'allocate-stock',
  confirmOrder: 'confirm-order',
  markCompensating: 'mark-compensating',
  refundPayment: 'refund-payment',
  recordRefund: 'record-refund',
  releaseStock: 'release-stock',
  closeOrder: 'close-order',
  /** The merchant-initiated refund, in its own workflow (`merchantRefund`), not the saga. */
  merchantRefund: 'merchant-refund',
} as const;

export type ActivityId = (typeof ActivityId)[keyof typeof ActivityId];

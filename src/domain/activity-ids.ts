/**
 * Explicit, stable activity IDs, one per call site. They are half of every idempotency key,
 * so renaming one changes the keys of every run that has not reached it yet: treat them as a
 * public name (CHANGELOG.md lists every change).
 */
export const ActivityId = {
  recordOrder: 'record-order',
  /** Takes the order's units from stock before any money is touched. */
  reserveStock: 'reserve-stock',
  /** Places the hold: a PaymentIntent confirmed with capture_method=manual. */
  authorizePayment: 'authorize-payment',
  /**
   * Settles an authorization that did not decide at once (3-D Secure, asynchronous methods);
   * numbered per check (`settle-authorization-1`, `-2`, ...). It records under the
   * authorization's key, so it derives no key of its own.
   */
  settleAuthorization: 'settle-authorization',
  /** Captures the hold: the moment money moves, and the ledger's charge. */
  capturePayment: 'capture-payment',
  confirmOrder: 'confirm-order',
  markCompensating: 'mark-compensating',
  /** Compensation of the capture: refunds what was captured, with the ledger's reversal. */
  refundCapture: 'refund-capture',
  /** Compensation of the authorization: voids (cancels) a hold that nothing captured. */
  voidAuthorization: 'void-authorization',
  releaseStock: 'release-stock',
  closeOrder: 'close-order',
  /** The merchant-initiated refund, in its own workflow (`merchantRefund`), not the saga. */
  merchantRefund: 'merchant-refund',
  /**
   * The dispute workflow's (`orderDispute`). Reading the dispute and booking it is numbered per
   * read (`sync-dispute-1`, `-2`, ...); its ledger entries are keyed by these step IDs, once each
   * per dispute.
   */
  syncDispute: 'sync-dispute',
  disputeWithdrawal: 'dispute-withdrawal',
  disputeFee: 'dispute-fee',
  disputeReinstatement: 'dispute-reinstatement',
  /** Evidence sent to Stripe, numbered per submission the merchant made (`submit-dispute-evidence-1`, ...). */
  submitDisputeEvidence: 'submit-dispute-evidence',
  /** Accepting the dispute (Stripe's close): the merchant's, or the deadline policy's. */
  acceptDispute: 'accept-dispute',
  announceEvidenceDue: 'announce-evidence-due',
  /** The early fraud warning workflow's (`orderFraudWarning`): plan, refund under the merchant refund protocol, announce. */
  planFraudWarningRefund: 'plan-fraud-warning-refund',
  fraudWarningRefund: 'fraud-warning-refund',
  announceFraudWarningRefunded: 'announce-fraud-warning-refunded',
} as const;

export type ActivityId = (typeof ActivityId)[keyof typeof ActivityId];

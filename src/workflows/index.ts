// The workflow bundle's entry: every workflow the order worker registers, and the saga's signal,
// query and update definitions.
export { orderPaymentSaga } from './order-payment-saga.js';
export { merchantRefund } from './merchant-refund.js';
export { orderDispute } from './order-dispute.js';
export { orderFraudWarning } from './order-fraud-warning.js';
export { acceptDisputeUpdate, disputeEventSignal, disputeStatusQuery, submitEvidenceUpdate } from './dispute-messages.js';
export { paymentEventSignal, paymentOutcomeUpdate, statusQuery } from './messages.js';
export { dailyReconciliation, reconciliationReportQuery, retentionReaper } from './scheduled-jobs.js';

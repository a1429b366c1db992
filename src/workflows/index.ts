export { orderPaymentSaga } from './order-payment-saga.js';
export { merchantRefund } from './merchant-refund.js';
export { paymentEventSignal, paymentOutcomeUpdate, statusQuery } from './messages.js';
export { dailyReconciliation, reconciliationReportQuery, retentionReaper } from './scheduled-jobs.js';

export { orderPaymentSaga, statusQuery } from './order-payment-saga.js';
export { merchantRefund } from './merchant-refund.js';

export { orderPaymentSaga, statusQuery } from './order-payment-saga.js';

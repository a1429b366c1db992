import { defineSignal } from '@temporalio/workflow';
import { PAYMENT_EVENT_SIGNAL, type PaymentEvent } from '../domain/payment-event.js';

/** A verified, recorded Stripe event about the order's payment (sent by the API). */
export const paymentEventSignal = defineSignal<[PaymentEvent]>(PAYMENT_EVENT_SIGNAL);

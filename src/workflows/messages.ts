// The saga's signal (Stripe's payment events), query (its status) and update (the payment's
// outcome), shared by the workflow and its callers.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { OrderInput } from '../domain/order-input.js';
import type { PaymentOutcome, SagaStatus } from '../domain/order-result.js';
import { PAYMENT_EVENT_SIGNAL, type PaymentEvent } from '../domain/payment-event.js';

/**
 * What the saga takes from outside while it runs, besides its input: Stripe's webhooks (a signal),
 * where it stands (a query), and the checkout's wait for the payment's outcome (an update).
 */

/** A verified, recorded Stripe event about the order's payment (sent by the API). */
export const paymentEventSignal = defineSignal<[PaymentEvent]>(PAYMENT_EVENT_SIGNAL);

/** The saga's step, the order's status, its Stripe IDs and, once known, the payment's outcome. */
export const statusQuery = defineQuery<SagaStatus>('status');

/**
 * Answers as soon as the authorization's outcome is known (authorized, the customer must act,
 * declined, out of stock), while the saga goes on to capture and confirm: the early return a
 * checkout waits for. Sent with Update-with-Start by the API and the starter; its argument is the
 * order the caller means, and the validator refuses, before anything enters the history, an order
 * that is not this run's.
 */
export const paymentOutcomeUpdate = defineUpdate<PaymentOutcome, [OrderInput]>('paymentOutcome');

// What every shape of the saga runs with: the order, its workflow and original run IDs, its
// progress, its payment events and its key derivation.
import type { OrderInput } from '../domain/order-input.js';
import type { PaymentEvents } from './payment-events.js';
import type { SagaProgress } from './saga-progress.js';

/** What every shape of the saga runs with: the order, its identity in Temporal, and its progress. */
export interface SagaContext {
  order: OrderInput;
  workflowId: string;
  /** The run ID Temporal keeps across Reset: with an activity ID, it makes the activity's key. */
  originalRunId: string;
  saga: SagaProgress;
  /** Stripe's webhooks about the order's payment, as the API signalled them. */
  paymentEvents: PaymentEvents;
  /** The idempotency key of an activity of this run, for the UI's summaries. */
  keyOf: (activityId: string) => string;
}

// Workflow helpers that move an order to a compensation or terminal status with its reason, and
// read the decline code from a PaymentDeclined failure.
import { proxyLocalActivities } from '@temporalio/workflow';
import type { OrderActivities } from '../activities/index.js';
import type { OrderStatusChangeResult } from '../activities/types.js';
import { POSTGRES_STEP_OPTIONS } from './activity-options.js';
import { failureDetailsOf } from './failure-type.js';

// A status move is a Postgres-only step keyed by nothing but the order: a local activity.
const orders = proxyLocalActivities<Pick<OrderActivities, 'setOrderStatus'>>(POSTGRES_STEP_OPTIONS);

/**
 * Moves the order to a compensation or terminal status, with the reason a person will read. It
 * retries until the database answers: a status that does not get written is an order left silent.
 * Resolves whether the order moved and its status after (undefined from a worker older than that answer).
 */
export function closeOrder(
  orderId: string,
  status: 'compensating' | 'declined' | 'compensated' | 'needs_review',
  reason: string | null,
): Promise<OrderStatusChangeResult | undefined> {
  return orders.setOrderStatus.executeWithOptions({ summary: `Postgres: mark order ${orderId} ${status}` }, [{ orderId, status, reason }]);
}

/** The decline code a PaymentDeclined failure carries, as the order's reason. */
export function declineCodeOf(error: unknown): string {
  const [details] = failureDetailsOf(error) as [{ declineCode?: string | null; code?: string } | undefined];
  return details?.declineCode ?? details?.code ?? 'card_declined';
}

// Workflow helpers that move an order to a compensation or terminal status with its reason, and
// read the decline code from a PaymentDeclined failure.
import { proxyActivities } from '@temporalio/workflow';
import type { OrderActivities } from '../activities/index.js';
import type { OrderStatusChangeResult } from '../activities/types.js';
import { ActivityId } from '../domain/activity-ids.js';
import { COMPENSATION_ACTIVITY_OPTIONS } from './activity-options.js';
import { failureDetailsOf } from './failure-type.js';

const orders = proxyActivities<Pick<OrderActivities, 'setOrderStatus'>>(COMPENSATION_ACTIVITY_OPTIONS);

/**
 * Moves the order to a compensation or terminal status, with the reason a person will read. It
 * retries like a compensation: a status that does not get written is an order left silent.
 * Resolves whether the order moved and its status after (undefined from a worker older than that answer).
 */
export function closeOrder(
  orderId: string,
  status: 'compensating' | 'declined' | 'compensated' | 'needs_review',
  reason: string | null,
  activityId: string = ActivityId.closeOrder,
): Promise<OrderStatusChangeResult | undefined> {
  return orders.setOrderStatus.executeWithOptions({ activityId, summary: `Postgres: mark order ${orderId} ${status}` }, [{ orderId, status, reason }]);
}

/** The decline code a PaymentDeclined failure carries, as the order's reason. */
export function declineCodeOf(error: unknown): string {
  const [details] = failureDetailsOf(error) as [{ declineCode?: string | null; code?: string } | undefined];
  return details?.declineCode ?? details?.code ?? 'card_declined';
}

/** POST /v1/orders's work after the caller checks: the order's ID, its answer, and its start under the Idempotency-Key. */
import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import type { TenantIdempotencyKey } from '../idempotency/api-idempotency-store.js';
import { startUnderIdempotencyKey, type ApiAnswer, type StartResult } from '../idempotency/idempotent-start.js';
import type { ApiIdempotencySettings } from '../idempotency/settings.js';
import { workflowIdForOrder, type OrderInput } from '../../domain/order-input.js';
import { requestHash } from '../../money/idempotency/request-hash.js';
import type { PaymentOutcome } from '../../domain/order-result.js';
import { startOrderForPaymentOutcome } from '../../saga-client/payment-outcome.js';
import { OrderIdConflictError } from '../../saga-client/start-order.js';
import { recordApiOrder } from './api-orders.js';

export const CREATE_ORDER_OPERATION = 'order.create';

/** How long POST /v1/orders waits for the payment's outcome by default (API_OUTCOME_WAIT_MS). */
export const DEFAULT_OUTCOME_WAIT_MS = 10_000;

/** The order as the caller describes it: everything but the ID, which the server assigns, and the tenant, which is the API key's. */
export type OrderRequest = Omit<OrderInput, 'orderId' | 'tenantId'>;

export interface CreateOrderDeps {
  db: Pool;
  temporal: { client: Client; taskQueue: string };
  idempotency: ApiIdempotencySettings;
  /** How long to wait for the payment's outcome before answering 202 pending. */
  outcomeWaitMs: number;
  /** Test seam: runs after the workflow start returned, before the response is stored. */
  afterWorkflowStart?: (orderId: string) => Promise<void>;
}

/** `ord_` + 24 base64url characters: 144 random bits, inside the order-ID pattern (letters, digits, '-', '_'). */
export function newOrderId(): string {
  return `ord_${randomBytes(18).toString('base64url')}`;
}

/**
 * The order as POST /v1/orders answers it: its payment's outcome as `status` (`authorized`,
 * `requires_action` with Stripe's `nextAction`, `declined` with its `declineCode`,
 * `out_of_stock`, `failed` with its `failureReason`), or `pending` when it was not known in time.
 */
export function orderResponseBody(orderId: string, order: OrderRequest, payment: PaymentOutcome | null) {
  return {
    id: orderId,
    object: 'order' as const,
    status: payment?.status ?? 'pending',
    ...(payment && 'paymentIntentId' in payment ? { paymentIntentId: payment.paymentIntentId } : {}),
    ...(payment?.status === 'requires_action' ? { nextAction: payment.nextAction } : {}),
    ...(payment?.status === 'declined' ? { declineCode: payment.declineCode } : {}),
    ...(payment?.status === 'failed' ? { failureReason: payment.reason } : {}),
    amount: order.amount,
    currency: order.currency,
    customerId: order.customerId,
    paymentMethod: order.paymentMethod,
    sku: order.sku,
    quantity: order.quantity,
    workflowId: workflowIdForOrder(orderId),
  };
}

/**
 * POST /v1/orders after the caller checks and validation, through the API's idempotent start:
 * the key is claimed (one short transaction, which also records the tenant's order); with no row
 * lock held, the order's workflow is started and its payment's outcome awaited in one
 * Update-with-Start, whose update ID is the tenant, the operation and the key; the answer is
 * stored (another transaction). A crash between the start and the store leaves the row pending
 * with its order ID; the retry takes over the expired lease and attaches to the same run and update.
 *
 * When the outcome is not known within `outcomeWaitMs` the answer is 202 pending, and it is not
 * stored: the row stays pending with its order ID and its lease is freed, so the same request
 * again attaches to the same update and answers 201 with the outcome once it is known.
 */
export async function createOrder(deps: CreateOrderDeps, scope: TenantIdempotencyKey, order: OrderRequest): Promise<ApiAnswer> {
  return startUnderIdempotencyKey({ db: deps.db, settings: deps.idempotency }, scope, {
    requestHash: requestHash(order),
    resourceType: 'order',
    proposedResourceId: newOrderId(),
    onCreated: (client, orderId) => recordApiOrder(client, scope.tenantId, orderId, order),
    inUseRetryAdvice: 'retry the same request',
    start: async (orderId): Promise<StartResult> => {
      let payment: PaymentOutcome | null;
      try {
        ({ payment } = await startOrderForPaymentOutcome(
          deps.temporal.client,
          deps.temporal.taskQueue,
          { orderId, tenantId: scope.tenantId, ...order },
          { updateId: paymentOutcomeUpdateId(scope), waitMs: deps.outcomeWaitMs },
        ));
        await deps.afterWorkflowStart?.(orderId);
      } catch (error) {
        // Cannot happen with server-assigned IDs unless the ID was reused by hand; final either way.
        if (error instanceof OrderIdConflictError) return { store: 'failed', statusCode: 409, body: { error: 'order_id_conflict', message: error.message } };
        throw error;
      }
      const location = `/v1/orders/${orderId}`;
      if (payment === null) {
        return { store: false, answer: { statusCode: 202, body: orderResponseBody(orderId, order, null), headers: { location, 'retry-after': '1' } } };
      }
      return { store: 'completed', statusCode: 201, body: orderResponseBody(orderId, order, payment), headers: { location } };
    },
  });
}

/** One update per Idempotency-Key: a retried request attaches to it instead of running another. */
export function paymentOutcomeUpdateId(scope: TenantIdempotencyKey): string {
  return `${scope.tenantId}/${scope.operation}/${scope.key}`;
}

import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyLease, type IdempotencyScope } from '../idempotency/api-idempotency-store.js';
import type { ApiIdempotencySettings } from '../idempotency/settings.js';
import { workflowIdForOrder, type OrderInput } from '../../domain/order-input.js';
import { requestHash } from '../../money/idempotency/request-hash.js';
import type { PaymentOutcome } from '../../domain/order-result.js';
import { startOrderForPaymentOutcome } from '../../saga-client/payment-outcome.js';
import { OrderIdConflictError } from '../../saga-client/start-order.js';
import { countIdempotencyClaim } from '../../platform/telemetry/api-metrics.js';

export const CREATE_ORDER_OPERATION = 'order.create';

/** How long POST /v1/orders waits for the payment's outcome by default (API_OUTCOME_WAIT_MS). */
export const DEFAULT_OUTCOME_WAIT_MS = 10_000;

/** The order as the caller describes it: everything but the ID, which the server assigns. */
export type OrderRequest = Omit<OrderInput, 'orderId'>;

export interface CreateOrderDeps {
  db: Pool;
  temporal: { client: Client; taskQueue: string };
  idempotency: ApiIdempotencySettings;
  /** How long to wait for the payment's outcome before answering 202 pending. */
  outcomeWaitMs: number;
  /** Test seam: runs after the workflow start returned, before the response is stored. */
  afterWorkflowStart?: (orderId: string) => Promise<void>;
}

/** What the handler answers; `headers` are added to the reply. */
export interface ApiAnswer {
  statusCode: number;
  body: unknown;
  headers?: Record<string, string>;
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
 * POST /v1/orders after authentication and validation: claim the key (one short transaction);
 * with no row lock held, start the order's workflow and wait for its payment's outcome in one
 * Update-with-Start, whose update ID is the tenant, the operation and the key; store the answer
 * (another transaction). A crash between the start and the store leaves the row pending with its
 * order ID; the retry takes over the expired lease and attaches to the same run and update.
 *
 * When the outcome is not known within `outcomeWaitMs` the answer is 202 pending, and it is not
 * stored: the row stays pending with its order ID and its lease is freed, so the same request
 * again attaches to the same update and answers 201 with the outcome once it is known.
 */
export async function createOrder(deps: CreateOrderDeps, scope: IdempotencyScope, order: OrderRequest): Promise<ApiAnswer> {
  const hash = requestHash(order);
  const claim = await claimIdempotencyKey(deps.db, scope, {
    requestHash: hash,
    resourceType: 'order',
    proposedResourceId: newOrderId(),
    leaseMs: deps.idempotency.leaseMs,
    retentionMs: deps.idempotency.retentionMs,
    onCreated: async (client, orderId) => {
      await client.query('insert into api_orders (order_id, tenant_id, request) values ($1, $2, $3)', [orderId, scope.tenantId, JSON.stringify(order)]);
    },
  });
  countIdempotencyClaim(scope.operation, claim);
  switch (claim.kind) {
    case 'replay':
      return { statusCode: claim.statusCode, body: claim.body, headers: { 'idempotent-replayed': 'true' } };
    case 'hash-mismatch':
      return keyReusedAnswer(scope);
    case 'in-progress':
      return {
        statusCode: 409,
        headers: { 'retry-after': String(claim.retryAfterSeconds) },
        body: {
          error: 'idempotency_key_in_use',
          message: `a request with Idempotency-Key '${scope.key}' is still being processed; retry the same request after ${claim.retryAfterSeconds} second(s)`,
        },
      };
    case 'expired':
      return expiredKeyAnswer(scope, claim);
    case 'proceed':
      break;
  }
  const orderId = claim.resourceId;
  let payment: PaymentOutcome | null;
  try {
    ({ payment } = await startOrderForPaymentOutcome(
      deps.temporal.client,
      deps.temporal.taskQueue,
      { orderId, ...order },
      { updateId: paymentOutcomeUpdateId(scope), waitMs: deps.outcomeWaitMs },
    ));
    await deps.afterWorkflowStart?.(orderId);
  } catch (error) {
    if (error instanceof OrderIdConflictError) {
      // Cannot happen with server-assigned IDs unless the ID was reused by hand; final either way.
      const stored = await completeIdempotencyKey(deps.db, scope, {
        state: 'failed',
        statusCode: 409,
        body: { error: 'order_id_conflict', message: error.message },
      });
      return { statusCode: stored.statusCode, body: stored.body };
    }
    // Transient (Temporal unreachable, a timeout): the row stays pending with its order ID;
    // freeing the lease lets the caller's retry resume at once instead of after it runs out.
    await releaseIdempotencyLease(deps.db, scope).catch(() => undefined);
    throw error;
  }
  const location = `/v1/orders/${orderId}`;
  if (payment === null) {
    await releaseIdempotencyLease(deps.db, scope);
    return { statusCode: 202, body: orderResponseBody(orderId, order, null), headers: { location, 'retry-after': '1' } };
  }
  const stored = await completeIdempotencyKey(deps.db, scope, { state: 'completed', statusCode: 201, body: orderResponseBody(orderId, order, payment) });
  return { statusCode: stored.statusCode, body: stored.body, headers: { location } };
}

/** One update per Idempotency-Key: a retried request attaches to it instead of running another. */
export function paymentOutcomeUpdateId(scope: IdempotencyScope): string {
  return `${scope.tenantId}/${scope.operation}/${scope.key}`;
}

export function keyReusedAnswer(scope: IdempotencyScope): ApiAnswer {
  return {
    statusCode: 422,
    body: {
      error: 'idempotency_key_reused',
      message: `Idempotency-Key '${scope.key}' was already used for a different request (${scope.operation}); nothing was applied. Use a new key for a new request`,
    },
  };
}

export function expiredKeyAnswer(
  scope: IdempotencyScope,
  claim: { sameRequest: boolean; resourceType: string | null; resourceId: string | null; createdAt: Date },
): ApiAnswer {
  if (!claim.sameRequest) return keyReusedAnswer(scope);
  return {
    statusCode: 409,
    body: {
      error: 'idempotency_key_expired',
      message:
        `Idempotency-Key '${scope.key}' was used on ${claim.createdAt.toISOString()} for this same request, which created ` +
        `${claim.resourceType ?? 'resource'} '${claim.resourceId ?? 'unknown'}'; its stored response has expired, so it is not replayed ` +
        'and nothing new was started. Read the resource for its current state, or use a new key for a new request',
      resourceType: claim.resourceType,
      resourceId: claim.resourceId,
    },
  };
}

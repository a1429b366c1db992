import { randomBytes } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyLease, type IdempotencyScope } from '../idempotency/api-idempotency-store.js';
import { requestHash } from '../../money/idempotency/request-hash.js';
import { MERCHANT_REFUND_WORKFLOW_PREFIX, type merchantRefund } from '../../workflows/merchant-refund.js';
import { expiredKeyAnswer, keyReusedAnswer, type ApiAnswer, type CreateOrderDeps } from './create-order.js';
import { countIdempotencyClaim } from '../../platform/telemetry/api-metrics.js';

export const CREATE_REFUND_OPERATION = 'refund.create';

export function merchantRefundWorkflowId(orderId: string, refundRequestId: string): string {
  return `${MERCHANT_REFUND_WORKFLOW_PREFIX}${orderId}-${refundRequestId}`;
}

/**
 * POST /v1/orders/:id/refunds after authentication, validation and the order's checks: the same
 * three steps as an order (claim, start outside any lock, store), with the refund request ID
 * fixed in the pending row so a retry after a crash attaches to the same refund workflow.
 */
export async function createRefund(
  deps: CreateOrderDeps,
  scope: IdempotencyScope,
  refund: { orderId: string; amount: number; currency: string },
): Promise<ApiAnswer> {
  const claim = await claimIdempotencyKey(deps.db, scope, {
    requestHash: requestHash({ orderId: refund.orderId, amount: refund.amount }),
    resourceType: 'refund',
    proposedResourceId: `rfd_${randomBytes(18).toString('base64url')}`,
    leaseMs: deps.idempotency.leaseMs,
    retentionMs: deps.idempotency.retentionMs,
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
        body: { error: 'idempotency_key_in_use', message: `a request with Idempotency-Key '${scope.key}' is still being processed; retry after ${claim.retryAfterSeconds} second(s)` },
      };
    case 'expired':
      return expiredKeyAnswer(scope, claim);
    case 'proceed':
      break;
  }
  const refundRequestId = claim.resourceId;
  const workflowId = merchantRefundWorkflowId(refund.orderId, refundRequestId);
  try {
    await deps.temporal.client.workflow.start<typeof merchantRefund>('merchantRefund', {
      workflowId,
      taskQueue: deps.temporal.taskQueue,
      args: [{ orderId: refund.orderId, refundRequestId, amount: refund.amount }],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      staticSummary: `Merchant refund ${refundRequestId}: ${refund.amount} ${refund.currency.toUpperCase()} of order ${refund.orderId}`,
    });
  } catch (error) {
    // Already started and finished: the retry's job is done; anything else is transient.
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) {
      await releaseIdempotencyLease(deps.db, scope).catch(() => undefined);
      throw error;
    }
  }
  const stored = await completeIdempotencyKey(deps.db, scope, {
    state: 'completed',
    statusCode: 201,
    body: { id: refundRequestId, object: 'refund', orderId: refund.orderId, amount: refund.amount, currency: refund.currency, status: 'pending', workflowId },
  });
  return { statusCode: stored.statusCode, body: stored.body };
}

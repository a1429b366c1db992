/** POST /v1/orders/:id/refunds's work after the caller and order checks: the merchant refund's start under the Idempotency-Key. */
import { randomBytes } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { TenantIdempotencyKey } from '../idempotency/api-idempotency-store.js';
import { startUnderIdempotencyKey, type ApiAnswer, type StartResult } from '../idempotency/idempotent-start.js';
import { requestHash } from '../../money/idempotency/request-hash.js';
import { MERCHANT_REFUND_WORKFLOW_PREFIX, type merchantRefund } from '../../workflows/merchant-refund.js';
import type { CreateOrderDeps } from './create-order.js';

export const CREATE_REFUND_OPERATION = 'refund.create';

export function merchantRefundWorkflowId(orderId: string, refundRequestId: string): string {
  return `${MERCHANT_REFUND_WORKFLOW_PREFIX}${orderId}-${refundRequestId}`;
}

/**
 * POST /v1/orders/:id/refunds after the caller checks, validation and the order's checks: the
 * same idempotent start as an order (claim, start outside any lock, store), with the refund
 * request ID fixed in the pending row so a retry after a crash attaches to the same refund workflow.
 */
export async function createRefund(
  deps: CreateOrderDeps,
  scope: TenantIdempotencyKey,
  refund: { orderId: string; amount: number; currency: string },
): Promise<ApiAnswer> {
  return startUnderIdempotencyKey({ db: deps.db, settings: deps.idempotency }, scope, {
    requestHash: requestHash({ orderId: refund.orderId, amount: refund.amount }),
    resourceType: 'refund',
    proposedResourceId: `rfd_${randomBytes(18).toString('base64url')}`,
    inUseRetryAdvice: 'retry',
    start: async (refundRequestId): Promise<StartResult> => {
      const workflowId = merchantRefundWorkflowId(refund.orderId, refundRequestId);
      try {
        await deps.temporal.client.workflow.start<typeof merchantRefund>('merchantRefund', {
          workflowId,
          taskQueue: deps.temporal.taskQueue,
          args: [{ orderId: refund.orderId, refundRequestId, amount: refund.amount }],
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
          // The order and the step only (docs/encryption.md): safe to show even where nothing decodes.
          staticSummary: `Merchant refund ${refundRequestId} of order ${refund.orderId}`,
        });
      } catch (error) {
        // Already started and finished: the retry's job is done; anything else is transient.
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
      return {
        store: 'completed',
        statusCode: 201,
        body: { id: refundRequestId, object: 'refund', orderId: refund.orderId, amount: refund.amount, currency: refund.currency, status: 'pending', workflowId },
      };
    },
  });
}

/** POST /v1/orders/:id/refunds's work after the caller and order checks: the merchant refund's start under the Idempotency-Key. */
import { randomBytes } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { TenantIdempotencyKey } from '../idempotency/api-idempotency-store.js';
import { startUnderIdempotencyKey, type ApiAnswer, type StartResult } from '../idempotency/idempotent-start.js';
import { requestHash } from '../../money/idempotency/request-hash.js';
import { merchantRefundWorkflowId, type merchantRefund } from '../../workflows/merchant-refund.js';
import { reserveRefund } from '../../money/payments/refund-requests.js';
import type { CreateOrderDeps } from './create-order.js';
import { refundRequestView } from './order-view.js';

export const CREATE_REFUND_OPERATION = 'refund.create';


/**
 * POST /v1/orders/:id/refunds after the caller checks, validation and the order's checks: the
 * same idempotent start as an order (claim, start outside any lock, store), with the refund
 * request ID fixed in the pending row so a retry after a crash attaches to the same refund workflow.
 */
export async function createRefund(
  deps: CreateOrderDeps,
  scope: TenantIdempotencyKey,
  refund: { orderId: string; amount: number },
): Promise<ApiAnswer> {
  return startUnderIdempotencyKey({ db: deps.db, settings: deps.idempotency }, scope, {
    requestHash: requestHash({ orderId: refund.orderId, amount: refund.amount }),
    resourceType: 'refund',
    proposedResourceId: `rfd_${randomBytes(18).toString('base64url')}`,
    inUseRetryAdvice: 'retry',
    start: async (refundRequestId): Promise<StartResult> => {
      // The reservation comes first: a refund the capture cannot cover is answered now, and no
      // workflow starts. Neither refusal is stored under the key: a request that fails gives its
      // reservation back, and the same request may then be made.
      const reserved = await reserveRefund(deps.db, { tenantId: scope.tenantId, orderId: refund.orderId, refundRequestId, amount: refund.amount });
      if (reserved.kind === 'over-budget') return { store: false, answer: amountTooLarge(refund, reserved.refundable, reserved.currency) };
      if (reserved.kind === 'not-captured') {
        return {
          store: false,
          answer: { statusCode: 409, body: { error: 'order_not_refundable', message: `order '${refund.orderId}' has no capture in the ledger yet; nothing to refund` } },
        };
      }
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
        body: refundRequestView(reserved.request, workflowId),
      };
    },
  });
}

/** 400 amount_too_large: what Stripe answers an over-refund, naming what is still refundable. */
function amountTooLarge(refund: { orderId: string; amount: number }, refundable: number, currency: string): ApiAnswer {
  return {
    statusCode: 400,
    body: {
      error: 'amount_too_large',
      message:
        `a refund of ${refund.amount} exceeds what is still refundable on order '${refund.orderId}': ${refundable} ${currency} ` +
        '(the capture, less every refund requested and not failed); nothing was started',
      refundable,
      currency,
    },
  };
}

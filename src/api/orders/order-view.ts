/** GET /v1/orders/:id's view of an order: the tenant's request, the order's progress and its refunds, each read from the module that owns it. */
import type { Queryable } from '../../platform/db/queryable.js';
import { workflowIdForOrder } from '../../domain/order-input.js';
import { orderRefunds } from '../../money/ledger/ledger.js';
import { orderRefundRequests, type RefundRequestRecord } from '../../money/payments/refund-requests.js';
import { merchantRefundWorkflowId } from '../../workflows/merchant-refund.js';
import { orderDisputes } from '../../money/payments/dispute-protocol.js';
import { disputeView } from './dispute-routes.js';
import { orderProgress } from '../../orders/orders.js';
import { findApiOrder } from './api-orders.js';

/**
 * An API-created order as its tenant sees it, or null when it does not exist for this tenant
 * (another tenant's order is indistinguishable from a missing one). Before the worker records
 * the order row, it reads as pending with what the caller asked for.
 */
export async function findTenantOrder(db: Queryable, tenantId: string, orderId: string) {
  const order = await findApiOrder(db, tenantId, orderId);
  if (!order) return null;
  const progress = await orderProgress(db, orderId);
  const refunds = await orderRefunds(db, orderId);
  const requests = await orderRefundRequests(db, orderId);
  const disputes = await orderDisputes(db, orderId);
  return {
    id: order.orderId,
    object: 'order' as const,
    status: progress?.status ?? 'pending',
    statusReason: progress?.statusReason ?? null,
    amount: order.request.amount,
    currency: order.request.currency,
    customerId: order.request.customerId,
    paymentMethod: order.request.paymentMethod,
    sku: order.request.sku,
    quantity: order.request.quantity,
    workflowId: workflowIdForOrder(order.orderId),
    stripe: { paymentIntentId: progress?.paymentIntentId ?? null, refundId: progress?.refundId ?? null },
    // Every refund the ledger recorded: the saga's compensation or the merchant's.
    refunds: refunds.map((refund) => ({
      stripeRefundId: refund.stripeRefundId,
      amount: refund.amountMinor,
      currency: refund.currency,
      createdAt: refund.createdAt.toISOString(),
    })),
    amountRefunded: refunds.reduce((sum, refund) => sum + refund.amountMinor, 0),
    // Every refund the merchant asked for, with where it stands: a failed one is here, not in refunds.
    refundRequests: requests.map((request) => refundRequestView(request)),
    // Disputes of the order's charge, each with its status, deadline and outcome.
    disputes: disputes.map(disputeView),
    createdAt: order.createdAt.toISOString(),
  };
}

/** A refund request as the API shows it: the POST's answer, and the GETs'. */
export function refundRequestView(request: RefundRequestRecord, workflowId = merchantRefundWorkflowId(request.orderId, request.refundRequestId)) {
  return {
    id: request.refundRequestId,
    object: 'refund' as const,
    orderId: request.orderId,
    amount: request.amount,
    currency: request.currency,
    status: request.status,
    stripeRefundId: request.stripeRefundId,
    failureReason: request.failureReason,
    workflowId,
    createdAt: request.createdAt.toISOString(),
    updatedAt: request.updatedAt.toISOString(),
  };
}

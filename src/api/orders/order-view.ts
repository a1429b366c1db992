import type { Queryable } from '../../platform/db/queryable.js';
import { workflowIdForOrder } from '../../domain/order-input.js';
import type { OrderRequest } from './create-order.js';

interface Row {
  order_id: string;
  request: OrderRequest;
  api_created_at: Date;
  status: string | null;
  status_reason: string | null;
  payment_intent_id: string | null;
  refund_id: string | null;
}

/**
 * An API-created order as its tenant sees it, or null when it does not exist for this tenant
 * (another tenant's order is indistinguishable from a missing one). Before the worker records
 * the order row, it reads as pending with what the caller asked for.
 */
export async function findTenantOrder(db: Queryable, tenantId: string, orderId: string) {
  const { rows } = await db.query<Row>(
    `select a.order_id, a.request, a.created_at as api_created_at, o.status, o.status_reason, o.payment_intent_id, o.refund_id
       from api_orders a left join orders o on o.order_id = a.order_id
      where a.order_id = $1 and a.tenant_id = $2`,
    [orderId, tenantId],
  );
  const row = rows[0];
  if (!row) return null;
  const { rows: refunds } = await db.query<{ stripe_object_id: string; amount_minor: string; currency: string; created_at: Date }>(
    `select stripe_object_id, amount_minor, currency, created_at from ledger_transactions
      where order_id = $1 and kind = 'refund' order by id`,
    [orderId],
  );
  return {
    id: row.order_id,
    object: 'order' as const,
    status: row.status ?? 'pending',
    statusReason: row.status_reason,
    amount: row.request.amount,
    currency: row.request.currency,
    customerId: row.request.customerId,
    paymentMethod: row.request.paymentMethod,
    sku: row.request.sku,
    quantity: row.request.quantity,
    workflowId: workflowIdForOrder(row.order_id),
    stripe: { paymentIntentId: row.payment_intent_id, refundId: row.refund_id },
    // Every refund the ledger recorded: the saga's compensation or the merchant's.
    refunds: refunds.map((refund) => ({
      stripeRefundId: refund.stripe_object_id,
      amount: Number(refund.amount_minor),
      currency: refund.currency,
      createdAt: refund.created_at.toISOString(),
    })),
    amountRefunded: refunds.reduce((sum, refund) => sum + Number(refund.amount_minor), 0),
    createdAt: row.api_created_at.toISOString(),
  };
}

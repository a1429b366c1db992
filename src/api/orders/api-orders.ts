/**
 * The api_orders table (migration 007): which tenant owns each order created through the API and
 * what it asked for. Written with the key's pending row, before the workflow starts, so
 * GET /v1/orders/:id answers (and isolates tenants) at once.
 */
import type { Queryable } from '../../platform/db/queryable.js';
import type { OrderRequest } from './create-order.js';

/** Records the tenant's new order; runs in the transaction that claims its Idempotency-Key. */
export async function recordApiOrder(db: Queryable, tenantId: string, orderId: string, request: OrderRequest): Promise<void> {
  await db.query('insert into api_orders (order_id, tenant_id, request) values ($1, $2, $3)', [orderId, tenantId, JSON.stringify(request)]);
}

/** The tenant's API-created order, or null when it has none by this ID (another tenant's included). */
export async function findApiOrder(db: Queryable, tenantId: string, orderId: string): Promise<{ orderId: string; request: OrderRequest; createdAt: Date } | null> {
  const { rows } = await db.query<{ order_id: string; request: OrderRequest; created_at: Date }>(
    'select order_id, request, created_at from api_orders where order_id = $1 and tenant_id = $2',
    [orderId, tenantId],
  );
  const row = rows[0];
  return row ? { orderId: row.order_id, request: row.request, createdAt: row.created_at } : null;
}

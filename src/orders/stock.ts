// Stock and its allocations: reserves a SKU's quantity once per key and releases it once, so a
// retried reservation or release changes the count at most once. Stock is a tenant's own: an
// order only ever reserves its own tenant's units (migration 016).
import type { PoolClient } from 'pg';
import type { Queryable } from '../platform/db/queryable.js';
import { AllocationReleasedError, IdempotencyConflictError, OutOfStockError } from '../domain/failures.js';
import { requestHash } from '../money/idempotency/request-hash.js';
import { DEFAULT_TENANT_ID } from '../domain/order-input.js';

export interface Allocation {
  idempotencyKey: string;
  orderId: string;
  sku: string;
  quantity: number;
}

/**
 * Allocates stock once per key: the allocation row and the conditional decrement commit
 * together, so a retried allocation finds its row and decrements nothing, and stock never goes
 * below zero (the decrement is conditional and the column has a check constraint). Must run in
 * the caller's transaction.
 *
 * The stock is the order's tenant's, read from the recorded order in the same statement: another
 * tenant's SKU of the same name is never looked at, so it answers exactly as a SKU nobody has
 * (OutOfStockError, unknown), whatever that tenant holds. No input names the tenant, so none can
 * name the wrong one.
 */
export async function allocateStock(client: PoolClient, allocation: Allocation): Promise<{ replayed: boolean }> {
  const hash = requestHash({ orderId: allocation.orderId, sku: allocation.sku, quantity: allocation.quantity });
  // The allocation row and its decrement in one statement (one round trip). The caller's
  // transaction rolls the row back when the decrement finds too little stock.
  const { rows } = await client.query<{ allocated: boolean; decremented: boolean }>(
    `with allocated as (
       insert into stock_allocations (idempotency_key, order_id, tenant_id, sku, quantity, request_hash)
       select $1, o.order_id, o.tenant_id, $3, $4, $5 from orders o
        where o.order_id = $2 and exists (select 1 from inventory i where i.tenant_id = o.tenant_id and i.sku = $3)
       on conflict (idempotency_key) do nothing
       returning tenant_id, sku, quantity
     ), decremented as (
       update inventory set available = available - allocated.quantity
         from allocated
        where inventory.tenant_id = allocated.tenant_id and inventory.sku = allocated.sku and inventory.available >= allocated.quantity
       returning inventory.sku
     )
     select exists (select 1 from allocated) as allocated, exists (select 1 from decremented) as decremented`,
    [allocation.idempotencyKey, allocation.orderId, allocation.sku, allocation.quantity, hash],
  );
  const outcome = rows[0];
  if (outcome?.allocated) {
    if (!outcome.decremented) throw new OutOfStockError(allocation.sku, allocation.quantity, true);
    return { replayed: false };
  }
  const { rows: existingRows } = await client.query<{ request_hash: string; state: 'allocated' | 'released' }>(
    'select request_hash, state from stock_allocations where idempotency_key = $1',
    [allocation.idempotencyKey],
  );
  const existing = existingRows[0];
  if (!existing) throw new OutOfStockError(allocation.sku, allocation.quantity, false);
  if (existing.request_hash !== hash) throw new IdempotencyConflictError('stock', allocation.idempotencyKey);
  // Released by a compensation: the intent was undone, and replaying it as held would lie.
  if (existing.state === 'released') throw new AllocationReleasedError(allocation.idempotencyKey);
  return { replayed: true };
}

/**
 * Releases the allocation made under `allocationKey`, exactly once, and closes the key so that
 * nothing can be allocated under it afterwards. One statement, decided by the key's primary key:
 *
 * - an allocation held under the key flips to released (the flip is conditional, so only the
 *   first release returns the units), and its units go back to stock;
 * - an allocation already released: nothing;
 * - no allocation yet: a released row takes the key (a tombstone: it returns no units). An allocating
 *   attempt still in flight (one whose worker stalled past its timeout, or the run before a
 *   reset) then finds the key released and decrements nothing (AllocationReleasedError), where
 *   a release that only looked would have let it take the stock after the order was undone.
 *   ON CONFLICT waits for such an attempt's uncommitted row and then flips it, so the two cannot
 *   pass each other.
 *
 * `line` is the order's (the allocation would have been of it): the tombstone carries its tenant,
 * SKU, quantity and request hash, so a late allocation is refused as released, not as a conflict.
 * A SKU its tenant does not stock can never be allocated, and gets no row. The units go back to
 * the stock row the allocation took them from (its tenant and SKU). Must run in the caller's
 * transaction.
 */
export async function releaseStock(
  client: PoolClient,
  release: { allocationKey: string; releaseKey: string; orderId: string; tenantId: string; sku: string; quantity: number },
): Promise<{ released: number }> {
  const hash = requestHash({ orderId: release.orderId, sku: release.sku, quantity: release.quantity });
  // Only the insert writes `tombstone`: a row it returns true for is this statement's tombstone,
  // and false is an allocation this statement flipped (migration 013 says why not the timestamps).
  const { rows } = await client.query<{ tenant_id: string; sku: string; quantity: number; was_allocated: boolean }>(
    `insert into stock_allocations as a (idempotency_key, order_id, tenant_id, sku, quantity, request_hash, state, released_at, release_key, tombstone)
     select $1, $3, $7, $4, $5, $6, 'released', now(), $2, true
      where exists (select 1 from inventory where tenant_id = $7 and sku = $4)
     on conflict (idempotency_key) do update
        set state = 'released', released_at = now(), release_key = excluded.release_key
      where a.state = 'allocated'
     returning a.tenant_id, a.sku, a.quantity, not a.tombstone as was_allocated`,
    [release.allocationKey, release.releaseKey, release.orderId, release.sku, release.quantity, hash, release.tenantId],
  );
  const allocation = rows[0];
  if (!allocation?.was_allocated) return { released: 0 };
  await client.query('update inventory set available = available + $3 where tenant_id = $1 and sku = $2', [
    allocation.tenant_id,
    allocation.sku,
    allocation.quantity,
  ]);
  return { released: allocation.quantity };
}

/** Sets a tenant's available units of a SKU (seeding, demos, tests); the tenant defaults to `default`. */
export async function setStock(db: Queryable, sku: string, available: number, tenantId: string = DEFAULT_TENANT_ID): Promise<void> {
  await db.query(
    `insert into inventory (tenant_id, sku, available) values ($1, $2, $3)
     on conflict (tenant_id, sku) do update set available = excluded.available`,
    [tenantId, sku, available],
  );
}

/** A tenant's available units of a SKU, or null when the tenant does not stock it. */
export async function availableStock(db: Queryable, tenantId: string, sku: string): Promise<number | null> {
  const { rows } = await db.query<{ available: number }>('select available from inventory where tenant_id = $1 and sku = $2', [tenantId, sku]);
  return rows[0]?.available ?? null;
}

// Retention of Idempotency-Keys: expired api_idempotency records become tombstones and expired
// tombstones are deleted; `npm run api` runs it periodically, `npm run api -- reap` once.
import type { Pool } from 'pg';
import { deleteInBatches } from '../../platform/db/batches.js';

export interface ReapResult {
  /** Full records past their retention, turned into tombstones. */
  compacted: number;
  /** Tombstones past theirs, deleted. */
  deleted: number;
}

/**
 * Deletes expired idempotency records in batches, each batch one statement: the record goes
 * and its tombstone (hash + resource ID) appears atomically, so no moment exists in which a
 * late retry finds neither and starts a second order. Pending rows are reaped too: one that
 * outlived the retention was abandoned by its caller, and its tombstone still names the order.
 */
export async function reapApiIdempotency(db: Pool, options: { tombstoneMs: number; batchSize?: number }): Promise<ReapResult> {
  const batchSize = options.batchSize ?? 1000;
  const result: ReapResult = { compacted: 0, deleted: 0 };
  for (;;) {
    const { rows } = await db.query<{ moved: number }>(
      `with expired as (
         select tenant_id, operation, idempotency_key from api_idempotency
          where expires_at <= now() order by expires_at limit $1 for update skip locked),
       moved as (
         delete from api_idempotency a using expired e
          where a.tenant_id = e.tenant_id and a.operation = e.operation and a.idempotency_key = e.idempotency_key
          returning a.*),
       tombstoned as (
         insert into api_idempotency_tombstones
           (tenant_id, operation, idempotency_key, request_hash, resource_type, resource_id, created_at, expires_at)
         select tenant_id, operation, idempotency_key, request_hash, resource_type, resource_id, created_at,
                greatest(now(), created_at + $2 * interval '1 millisecond')
           from moved
         on conflict (tenant_id, operation, idempotency_key) do update
           set request_hash = excluded.request_hash, resource_type = excluded.resource_type,
               resource_id = excluded.resource_id, created_at = excluded.created_at, expires_at = excluded.expires_at
         returning 1)
       select count(*)::int as moved from tombstoned`,
      [batchSize, options.tombstoneMs],
    );
    const moved = rows[0]?.moved ?? 0;
    result.compacted += moved;
    if (moved < batchSize) break;
  }
  result.deleted = await deleteInBatches(
    db,
    `delete from api_idempotency_tombstones where ctid in (
       select ctid from api_idempotency_tombstones where expires_at <= now() limit $1 for update skip locked)`,
    [],
    batchSize,
  );
  return result;
}

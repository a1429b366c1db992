// The api_idempotency table (migration 007) as the API uses it: claim an Idempotency-Key under a
// lease, store its response or release the lease; a reaped key's tombstone answers late retries.
import type { Pool, PoolClient } from 'pg';
import { withTransaction } from '../../platform/db/transaction.js';

/**
 * An Idempotency-Key as the API stores it: scoped by tenant and operation, so the same key
 * elsewhere is another intent. (Distinct from the activities' `IdempotencyScope`, an operation name.)
 */
export interface TenantIdempotencyKey {
  tenantId: string;
  operation: string;
  key: string;
}

export interface ClaimRequest {
  requestHash: string;
  resourceType: string;
  /** Used only if this request inserts the row; a retry gets the ID fixed by the first. */
  proposedResourceId: string;
  leaseMs: number;
  retentionMs: number;
  /** Runs in the claiming transaction when this request created the row (e.g. records ownership). */
  onCreated?: (client: PoolClient, resourceId: string) => Promise<void>;
}

export type Claim =
  /** This request holds the lease: perform the operation on `resourceId`, then `complete`. */
  | { kind: 'proceed'; resourceId: string; created: boolean }
  /** The key finished before: answer what is stored. */
  | { kind: 'replay'; statusCode: number; body: unknown }
  /** Another live request holds the lease. */
  | { kind: 'in-progress'; retryAfterSeconds: number }
  /** The key was used with another request body. */
  | { kind: 'hash-mismatch' }
  /** Only a tombstone is left: the full record was reaped after its retention. */
  | { kind: 'expired'; sameRequest: boolean; resourceType: string | null; resourceId: string | null; createdAt: Date };

interface Row {
  request_hash: string;
  state: 'pending' | 'completed' | 'failed';
  status_code: number | null;
  response_body: unknown;
  resource_id: string | null;
  lease_left_ms: number | null;
}

/** Thrown inside the claim transaction to roll back a row this request just inserted. */
class RollBack extends Error {
  constructor(readonly claim: Claim) {
    super('roll back the freshly inserted key');
  }
}

/**
 * The article's flow, first half, in one short transaction: insert the key as pending (on
 * conflict do nothing), load it for update, compare the hash, answer a finished key from what
 * is stored, refuse a key under a live lease, otherwise take the lease. No lock is held after
 * it returns: the caller performs the operation (a Temporal call) outside any transaction.
 */
export async function claimIdempotencyKey(db: Pool, scope: TenantIdempotencyKey, request: ClaimRequest): Promise<Claim> {
  const pk = [scope.tenantId, scope.operation, scope.key];
  try {
    return await withTransaction(db, async (client) => {
      const inserted = await client.query(
        `insert into api_idempotency
           (tenant_id, operation, idempotency_key, request_hash, state, resource_type, resource_id, expires_at, locked_until)
         values ($1, $2, $3, $4, 'pending', $5, $6, now() + $7 * interval '1 millisecond', now() + $8 * interval '1 millisecond')
         on conflict do nothing`,
        [...pk, request.requestHash, request.resourceType, request.proposedResourceId, request.retentionMs, request.leaseMs],
      );
      const { rows } = await client.query<Row>(
        `select request_hash, state, status_code, response_body, resource_id,
                (extract(epoch from locked_until - clock_timestamp()) * 1000)::float8 as lease_left_ms
           from api_idempotency
          where tenant_id = $1 and operation = $2 and idempotency_key = $3
          for update`,
        pk,
      );
      const row = rows[0];
      if (!row) throw new Error(`api_idempotency row for '${scope.key}' vanished inside its own transaction`);
      if (inserted.rowCount === 1) {
        // A fresh row may be the reaper's leftover key coming back: read its tombstone after the
        // insert, so a reap committed while we waited on the old row is seen.
        const tombstone = await findTombstone(client, scope);
        if (tombstone) {
          throw new RollBack({
            kind: 'expired',
            sameRequest: tombstone.request_hash === request.requestHash,
            resourceType: tombstone.resource_type,
            resourceId: tombstone.resource_id,
            createdAt: tombstone.created_at,
          });
        }
        await request.onCreated?.(client, request.proposedResourceId);
        return { kind: 'proceed', resourceId: request.proposedResourceId, created: true };
      }
      if (row.request_hash !== request.requestHash) return { kind: 'hash-mismatch' };
      if (row.state !== 'pending') {
        return { kind: 'replay', statusCode: row.status_code ?? 500, body: row.response_body };
      }
      if (row.lease_left_ms !== null && row.lease_left_ms > 0) {
        return { kind: 'in-progress', retryAfterSeconds: Math.max(1, Math.ceil(row.lease_left_ms / 1000)) };
      }
      // The lease ran out (its holder crashed or gave up): this request takes over the same resource.
      await client.query(
        `update api_idempotency set locked_until = now() + $4 * interval '1 millisecond'
          where tenant_id = $1 and operation = $2 and idempotency_key = $3`,
        [...pk, request.leaseMs],
      );
      if (!row.resource_id) throw new Error(`pending api_idempotency row for '${scope.key}' has no resource ID`);
      return { kind: 'proceed', resourceId: row.resource_id, created: false };
    });
  } catch (error) {
    if (error instanceof RollBack) return error.claim;
    throw error;
  }
}

export interface StoredResponse {
  statusCode: number;
  body: unknown;
}

/**
 * The second half: stores the outcome and ends the lease. If another request (which took over
 * an expired lease) stored first, its response is returned instead, so every caller of one key
 * sees one answer.
 */
export async function completeIdempotencyKey(
  db: Pool,
  scope: TenantIdempotencyKey,
  outcome: StoredResponse & { state: 'completed' | 'failed' },
): Promise<StoredResponse> {
  const pk = [scope.tenantId, scope.operation, scope.key];
  const { rows } = await db.query<{ status_code: number; response_body: unknown }>(
    `with stored as (
       update api_idempotency
          set state = $4, status_code = $5, response_body = $6, locked_until = null
        where tenant_id = $1 and operation = $2 and idempotency_key = $3 and state = 'pending'
        returning status_code, response_body)
     select status_code, response_body from stored
     union all
     select status_code, response_body from api_idempotency
      where tenant_id = $1 and operation = $2 and idempotency_key = $3 and not exists (select 1 from stored)`,
    [...pk, outcome.state, outcome.statusCode, JSON.stringify(outcome.body)],
  );
  const row = rows[0];
  if (!row) throw new Error(`api_idempotency row for '${scope.key}' is gone before its response was stored`);
  return { statusCode: row.status_code, body: row.response_body };
}

/** Gives up the lease after a transient failure, so the caller's retry proceeds at once. */
export async function releaseIdempotencyLease(db: Pool, scope: TenantIdempotencyKey): Promise<void> {
  await db.query(
    `update api_idempotency set locked_until = null
      where tenant_id = $1 and operation = $2 and idempotency_key = $3 and state = 'pending'`,
    [scope.tenantId, scope.operation, scope.key],
  );
}

async function findTombstone(client: PoolClient, scope: TenantIdempotencyKey) {
  const { rows } = await client.query<{ request_hash: string; resource_type: string | null; resource_id: string | null; created_at: Date }>(
    `select request_hash, resource_type, resource_id, created_at from api_idempotency_tombstones
      where tenant_id = $1 and operation = $2 and idempotency_key = $3 and expires_at > now()`,
    [scope.tenantId, scope.operation, scope.key],
  );
  return rows[0] ?? null;
}

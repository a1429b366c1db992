// The activity_idempotency table: every side-effecting activity's key, registered before its
// effect and finished with its outcome, so a retry answers from the record (I1, I7).
import type { PoolClient } from 'pg';
import { deleteInBatches } from '../../platform/db/batches.js';
import type { Queryable } from '../../platform/db/queryable.js';
import { IdempotencyConflictError } from '../../domain/failures.js';

/**
 * Operations whose keys live in `activity_idempotency`. A key is scoped by its operation.
 * The saga's payment keys are `stripe.authorize`, `stripe.capture`, `stripe.void` and `stripe.refund`
 * (src/money/payments/payment-protocol.ts). A merchant refund's key is `stripe.merchant_refund`,
 * and `merchant_refund.request` claims its refund request for that one key
 * (src/money/payments/merchant-refund-protocol.ts).
 */
export type IdempotencyScope =
  | 'stripe.authorize'
  | 'stripe.capture'
  | 'stripe.void'
  | 'stripe.refund'
  | 'stripe.merchant_refund'
  | 'merchant_refund.request';

/**
 * `pending`: registered, no answer yet. `processing`: the downstream answered, but the outcome
 * is still settling there (an asynchronous payment); the result holds what to settle. Both are
 * open; `completed` and `failed` are final.
 */
export type KeyState = 'pending' | 'processing' | 'completed' | 'failed';

/**
 * Request hash of a key closed by a compensation before any attempt registered it. Such a key
 * answers every later attempt with its failure, whatever that attempt's payload.
 */
export const FENCED_REQUEST_HASH = 'fenced';

export interface KeyRecord<Result> {
  state: KeyState;
  requestHash: string;
  result: Result | null;
  attempts: number;
  createdAt: Date;
}

interface KeyRow {
  state: KeyState;
  request_hash: string;
  result: unknown;
  attempts: number;
  created_at: Date;
}

function toRecord<Result>(row: KeyRow): KeyRecord<Result> {
  return {
    state: row.state,
    requestHash: row.request_hash,
    result: row.result as Result | null,
    attempts: row.attempts,
    createdAt: row.created_at,
  };
}

export interface RegisterKey {
  scope: IdempotencyScope;
  key: string;
  requestHash: string;
  /** How long the record outlives its creation; keep it past every replay horizon. */
  retentionMs: number;
}

/**
 * Registers the key as pending, or finds the record an earlier attempt left, and counts this
 * attempt, in one statement: two attempts racing on one key both get the single row the
 * constraint let through (the loser waits on the winner's row lock). The same key with another
 * request hash throws IdempotencyConflictError.
 */
export async function registerKey<Result>(db: Queryable, request: RegisterKey): Promise<KeyRecord<Result>> {
  const { rows } = await db.query<KeyRow>(
    `insert into activity_idempotency (scope, idempotency_key, request_hash, attempts, expires_at)
     values ($1, $2, $3, 1, now() + make_interval(secs => $4::double precision / 1000))
     on conflict (scope, idempotency_key) do update
       set attempts = activity_idempotency.attempts + 1, updated_at = now()
     returning state, request_hash, result, attempts, created_at`,
    [request.scope, request.key, request.requestHash, request.retentionMs],
  );
  const row = rows[0];
  if (!row) throw new Error(`activity_idempotency row for ${request.scope} '${request.key}' vanished`);
  if (row.request_hash !== request.requestHash && row.request_hash !== FENCED_REQUEST_HASH) throw new IdempotencyConflictError(request.scope, request.key);
  return toRecord<Result>(row);
}

/**
 * The retry of a key that already has its outcome (completed, failed, or processing) for this
 * request: one indexed statement, outside any transaction, that reads the record and counts the
 * attempt. Null when the key is absent, still pending, or held by another request: the caller
 * then registers it, which also reports a conflict.
 */
export async function replayFinishedKey<Result>(
  db: Queryable,
  scope: IdempotencyScope,
  key: string,
  requestHash: string,
): Promise<KeyRecord<Result> | null> {
  const { rows } = await db.query<KeyRow>(
    `update activity_idempotency set attempts = attempts + 1, updated_at = now()
      where scope = $1 and idempotency_key = $2 and state <> 'pending'
        and (request_hash = $3 or request_hash = '${FENCED_REQUEST_HASH}')
      returning state, request_hash, result, attempts, created_at`,
    [scope, key, requestHash],
  );
  return rows[0] ? toRecord<Result>(rows[0]) : null;
}

/** Reads a key without registering it (the refund resolving the charge it compensates). */
export async function readKey<Result>(
  db: Queryable,
  scope: IdempotencyScope,
  key: string,
): Promise<KeyRecord<Result> | null> {
  const { rows } = await db.query<KeyRow>(
    `select state, request_hash, result, attempts, created_at
       from activity_idempotency where scope = $1 and idempotency_key = $2`,
    [scope, key],
  );
  return rows[0] ? toRecord<Result>(rows[0]) : null;
}

/**
 * Finishes an open (pending or processing) key with its outcome. Returns false when the key was
 * no longer open: another attempt finished it first, or a compensation fenced it; the caller then
 * answers with what is stored instead of its own result.
 */
export async function finishKey(
  client: PoolClient,
  scope: IdempotencyScope,
  key: string,
  state: 'completed' | 'failed',
  result: object,
): Promise<boolean> {
  const { rowCount } = await client.query(
    `update activity_idempotency set state = $3, result = $4, updated_at = now()
      where scope = $1 and idempotency_key = $2 and state in ('pending', 'processing')`,
    [scope, key, state, JSON.stringify(result)],
  );
  return rowCount === 1;
}

/**
 * Moves a pending key to processing: the downstream accepted the request and will settle it
 * later. Returns false when the key was no longer pending (fenced, or finished by another attempt).
 */
export async function markKeyProcessing(client: PoolClient, scope: IdempotencyScope, key: string, result: object): Promise<boolean> {
  const { rowCount } = await client.query(
    `update activity_idempotency set state = 'processing', result = $3, updated_at = now()
      where scope = $1 and idempotency_key = $2 and state = 'pending'`,
    [scope, key, JSON.stringify(result)],
  );
  return rowCount === 1;
}

/**
 * Closes a key that never reached a recorded outcome as failed, creating it if no attempt ever
 * registered it, so that no later attempt under it calls the downstream. Returns the record as
 * it stands afterwards (completed if an attempt finished first).
 */
export async function fenceKey<Result>(
  client: PoolClient,
  fence: { scope: IdempotencyScope; key: string; retentionMs: number; result: object },
): Promise<KeyRecord<Result>> {
  const { rows } = await client.query<KeyRow>(
    `insert into activity_idempotency (scope, idempotency_key, request_hash, state, result, expires_at)
     values ($1, $2, '${FENCED_REQUEST_HASH}', 'failed', $3, now() + make_interval(secs => $4::double precision / 1000))
     on conflict (scope, idempotency_key) do update
       set state = 'failed', result = excluded.result, updated_at = now()
       where activity_idempotency.state = 'pending'
     returning state, request_hash, result, attempts, created_at`,
    [fence.scope, fence.key, JSON.stringify(fence.result), fence.retentionMs],
  );
  if (rows[0]) return toRecord<Result>(rows[0]);
  const existing = await readKey<Result>(client, fence.scope, fence.key);
  if (!existing) throw new Error(`activity_idempotency row for ${fence.scope} '${fence.key}' vanished`);
  return existing;
}

/**
 * Replaces a fence with the outcome that really happened: an attempt already in flight when
 * the key was fenced came back with a charge. Only fences are reopened; a real failure stands.
 */
export async function reopenFencedKey(client: PoolClient, scope: IdempotencyScope, key: string, result: object): Promise<boolean> {
  const { rowCount } = await client.query(
    `update activity_idempotency set state = 'completed', result = $3, updated_at = now()
      where scope = $1 and idempotency_key = $2 and state = 'failed' and (result->>'fenced')::boolean`,
    [scope, key, JSON.stringify(result)],
  );
  return rowCount === 1;
}

/**
 * Deletes final (completed or failed) keys past their `expires_at`, in batches of `batchSize`,
 * each its own statement. A key's `expires_at` was set at registration from the worker's key
 * retention, which the retention settings hold above every replay window (src/operations/retention). Open
 * keys (pending, processing) are never deleted: their outcome is still unknown or settling, and
 * the next attempt must find them; `countExpiredOpenKeys` reports them instead.
 */
export async function reapExpiredKeys(db: Queryable, batchSize: number): Promise<number> {
  return deleteInBatches(
    db,
    `delete from activity_idempotency where ctid in (
       select ctid from activity_idempotency
        where expires_at <= now() and state in ('completed', 'failed')
        limit $1 for update skip locked)`,
    [],
    batchSize,
  );
}

/** Keys past their `expires_at` that are still open: kept, for a person or the reconciliation. */
export async function countExpiredOpenKeys(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ open: number }>(
    `select count(*)::int as open from activity_idempotency where expires_at <= now() and state in ('pending', 'processing')`,
  );
  return rows[0]?.open ?? 0;
}

/**
 * The API's idempotent start, as the routes use it: claim the Idempotency-Key, start the work
 * outside any lock, then store the answer (or free the lease when there is none to store yet, or
 * when the start failed). The store's transitions (api-idempotency-store.ts) stay the protocol;
 * this is its one route-facing sequence, with every answer a claim can lead to and its metric.
 */
import type { Pool, PoolClient } from 'pg';
import { countIdempotencyClaim } from '../../platform/telemetry/api-metrics.js';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyLease, type TenantIdempotencyKey } from './api-idempotency-store.js';
import type { ApiIdempotencySettings } from './settings.js';

/** What a route answers; `headers` are added to the reply. */
export interface ApiAnswer {
  statusCode: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** What the start produced for the claimed resource. */
export type StartResult =
  /** Final: stored under the key, so every retry replays it. `headers` go on this reply only. */
  | { store: 'completed' | 'failed'; statusCode: number; body: unknown; headers?: Record<string, string> }
  /** Not final yet (e.g. 202 pending): answered without storing, and the lease is freed so the same request attaches again. */
  | { store: false; answer: ApiAnswer };

export interface IdempotentStart {
  /** The hash of the validated request: the key cannot be reused for another one. */
  requestHash: string;
  resourceType: string;
  /** The resource ID this request uses if it is the first; a retry gets the first one's. */
  proposedResourceId: string;
  /** Runs in the claiming transaction when this request created the key's row. */
  onCreated?: (client: PoolClient, resourceId: string) => Promise<void>;
  /**
   * How the 409 idempotency_key_in_use message tells the caller to retry ('retry the same request'
   * for orders, 'retry' for refunds: each route has always worded it so).
   */
  inUseRetryAdvice: string;
  /**
   * Starts (or attaches to) the work on `resourceId`, with no lock held. A throw is transient: the
   * row stays pending with its resource ID, the lease is freed, and the error goes on.
   */
  start: (resourceId: string) => Promise<StartResult>;
}

/**
 * Claim, start, complete or release. First call: the start runs and its answer is stored
 * (or, not final yet, answered and the lease freed). A finished key: its stored answer with
 * Idempotent-Replayed: true. A live lease: 409 with Retry-After. Another body under the key: 422.
 * A key reaped to its tombstone: 409 naming the resource (422 for another body).
 */
export async function startUnderIdempotencyKey(
  deps: { db: Pool; settings: ApiIdempotencySettings },
  scope: TenantIdempotencyKey,
  request: IdempotentStart,
): Promise<ApiAnswer> {
  const claim = await claimIdempotencyKey(deps.db, scope, {
    requestHash: request.requestHash,
    resourceType: request.resourceType,
    proposedResourceId: request.proposedResourceId,
    leaseMs: deps.settings.leaseMs,
    retentionMs: deps.settings.retentionMs,
    ...(request.onCreated ? { onCreated: request.onCreated } : {}),
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
        body: {
          error: 'idempotency_key_in_use',
          message: `a request with Idempotency-Key '${scope.key}' is still being processed; ${request.inUseRetryAdvice} after ${claim.retryAfterSeconds} second(s)`,
        },
      };
    case 'expired':
      return expiredKeyAnswer(scope, claim);
    case 'proceed':
      break;
  }
  let result: StartResult;
  try {
    result = await request.start(claim.resourceId);
  } catch (error) {
    // Transient (Temporal unreachable, a timeout): the row stays pending with its resource ID;
    // freeing the lease lets the caller's retry resume at once instead of after it runs out.
    await releaseIdempotencyLease(deps.db, scope).catch(() => undefined);
    throw error;
  }
  if (result.store === false) {
    await releaseIdempotencyLease(deps.db, scope);
    return result.answer;
  }
  // If another request took over an expired lease and stored first, its answer is the one.
  const stored = await completeIdempotencyKey(deps.db, scope, { state: result.store, statusCode: result.statusCode, body: result.body });
  return { statusCode: stored.statusCode, body: stored.body, ...(result.headers ? { headers: result.headers } : {}) };
}

function keyReusedAnswer(scope: TenantIdempotencyKey): ApiAnswer {
  return {
    statusCode: 422,
    body: {
      error: 'idempotency_key_reused',
      message: `Idempotency-Key '${scope.key}' was already used for a different request (${scope.operation}); nothing was applied. Use a new key for a new request`,
    },
  };
}

function expiredKeyAnswer(
  scope: TenantIdempotencyKey,
  claim: { sameRequest: boolean; resourceType: string | null; resourceId: string | null; createdAt: Date },
): ApiAnswer {
  if (!claim.sameRequest) return keyReusedAnswer(scope);
  return {
    statusCode: 409,
    body: {
      error: 'idempotency_key_expired',
      message:
        `Idempotency-Key '${scope.key}' was used on ${claim.createdAt.toISOString()} for this same request, which created ` +
        `${claim.resourceType ?? 'resource'} '${claim.resourceId ?? 'unknown'}'; its stored response has expired, so it is not replayed ` +
        'and nothing new was started. Read the resource for its current state, or use a new key for a new request',
      resourceType: claim.resourceType,
      resourceId: claim.resourceId,
    },
  };
}

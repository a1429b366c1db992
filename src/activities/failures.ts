import { ApplicationFailure } from '@temporalio/common';
import { DatabaseError } from 'pg';
import { FailureType } from '../domain/failures.js';
import { IdempotencyConflictError } from '../money/idempotency/idempotency-conflict-error.js';
import { AllocationReleasedError, OutOfStockError } from '../orders/stock.js';
import { LedgerDuplicateError } from '../money/ledger/ledger-duplicate-error.js';
import { OrderAlreadyChargedError } from '../orders/orders.js';

const UNIQUE_VIOLATION = '23505';

/**
 * Turns the domain's final errors into non-retryable ApplicationFailures the workflow branches
 * on. Anything else is rethrown unchanged and retried by the activity's retry policy: a lost
 * connection or a terminated backend heals on the next attempt.
 */
export function toActivityFailure(error: unknown): unknown {
  if (error instanceof IdempotencyConflictError) {
    return ApplicationFailure.nonRetryable(error.message, FailureType.IdempotencyConflict, {
      scope: error.scope,
      key: error.key,
    });
  }
  if (error instanceof LedgerDuplicateError) {
    return ApplicationFailure.nonRetryable(error.message, FailureType.IdempotencyConflict, {
      scope: 'ledger',
      key: error.key,
      guard: error.guard,
      existingKey: error.existingKey,
    });
  }
  if (error instanceof OutOfStockError) {
    return ApplicationFailure.nonRetryable(error.message, FailureType.OutOfStock, {
      sku: error.sku,
      requested: error.requested,
    });
  }
  if (error instanceof AllocationReleasedError) {
    return ApplicationFailure.nonRetryable(error.message, FailureType.OrderNotConfirmable, { key: error.key });
  }
  if (error instanceof OrderAlreadyChargedError) {
    return ApplicationFailure.nonRetryable(error.message, FailureType.OrderAlreadyCharged, { orderId: error.orderId });
  }
  // Any other uniqueness guard that held: retrying would hit it again.
  if (error instanceof DatabaseError && error.code === UNIQUE_VIOLATION) {
    return ApplicationFailure.nonRetryable(
      `uniqueness guard '${error.constraint ?? 'unknown'}' refused a duplicate: ${error.detail ?? error.message}`,
      FailureType.IdempotencyConflict,
    );
  }
  return error;
}

/** Runs an activity body, mapping its final errors for Temporal. */
export async function mappingFailures<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toActivityFailure(error);
  }
}

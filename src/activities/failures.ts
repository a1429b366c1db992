// Maps what an activity body throws to what Temporal records: the domain's final errors become
// non-retryable ApplicationFailures of their type; anything else is retried.
import { ApplicationFailure } from '@temporalio/common';
import { OrderPaymentError, UniquenessGuardError } from '../domain/failures.js';
import { isUniqueViolation } from '../platform/db/unique-violation.js';

/**
 * Turns the domain's final errors into non-retryable ApplicationFailures the workflow branches
 * on, carrying their details and category (BENIGN for declines and out-of-stock). Anything else
 * is rethrown unchanged and retried by the activity's retry policy: a lost connection or a
 * terminated backend heals on the next attempt.
 */
export function toActivityFailure(error: unknown): unknown {
  const final = error instanceof OrderPaymentError ? error : uniquenessGuardOf(error);
  return final ? ApplicationFailure.create({ message: final.message, type: final.type, nonRetryable: true, details: final.details && [final.details], category: final.category }) : error;
}

/** A uniqueness constraint that held where no domain error names it: retrying would meet it again. */
function uniquenessGuardOf(error: unknown): UniquenessGuardError | null {
  if (!isUniqueViolation(error)) return null;
  return new UniquenessGuardError(error.constraint ?? 'unknown', error.detail ?? error.message);
}

/**
 * The same activities, each mapping its final errors for Temporal (createActivities applies it
 * to all of them).
 */
export function mappingEveryFailure<Activities extends Record<string, (...args: never[]) => Promise<unknown>>>(activities: Activities): Activities {
  const mapped = Object.entries(activities).map(([name, activity]) => [name, (...args: never[]) => mappingFailures(() => activity(...args))]);
  return Object.fromEntries(mapped) as Activities;
}

/** Runs an activity body, mapping its final errors for Temporal. */
export async function mappingFailures<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toActivityFailure(error);
  }
}

// Reads an activity failure's ApplicationFailure type and details inside workflow code, and
// describes it in one line for a person.
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';

/** The ApplicationFailure type behind an activity's failure, if it has one. */
export function failureTypeOf(error: unknown): string | null {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure ? (cause.type ?? null) : null;
}

/** The details an activity attached to its ApplicationFailure. */
export function failureDetailsOf(error: unknown): unknown[] {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure ? (cause.details ?? []) : [];
}

/** A one-line reason for a person: the failure's type and its message. */
export function describeFailure(error: unknown): string {
  const cause = error instanceof ActivityFailure ? (error.cause ?? error) : error;
  if (cause instanceof ApplicationFailure) return `${cause.type ?? 'Error'}: ${cause.message}`;
  return cause instanceof Error ? cause.message : String(cause);
}

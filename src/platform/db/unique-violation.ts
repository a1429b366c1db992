// Recognises PostgreSQL's unique_violation (SQLSTATE 23505): a uniqueness constraint that held,
// optionally a named one, for the callers that give it a meaning of their own.
import { DatabaseError } from 'pg';

const UNIQUE_VIOLATION = '23505';

/** Whether `error` is a unique violation, of the constraint named when one is given. */
export function isUniqueViolation(error: unknown, constraint?: string): error is DatabaseError {
  return error instanceof DatabaseError && error.code === UNIQUE_VIOLATION && (constraint === undefined || error.constraint === constraint);
}

// Derives the running activity's idempotency key from the workflow's original run ID and the
// activity's explicit ID (the key rule), so no activity spells its own.
import { Context } from '@temporalio/activity';
import { deriveIdempotencyKey } from '../money/idempotency/idempotency-key.js';

/** This activity's idempotency key: the run ID it was handed, plus its own explicit ID. */
export function currentActivityKey(originalRunId: string, step?: string): string {
  return deriveIdempotencyKey({ runId: originalRunId, activityId: Context.current().info.activityId, step });
}

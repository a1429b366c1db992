/** Stripe rejects longer keys; the ledger's column has the same bound. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ACTIVITY_ID = /^[a-z][a-z0-9-]{0,99}$/;

export interface IdempotencyKeyParts {
  /**
   * The workflow's original execution run ID (`workflowInfo().originalExecutionRunId`).
   * Temporal keeps it across Reset, which re-runs the activities after the reset point: with
   * the current run ID they would present new keys and charge again.
   */
  runId: string;
  /**
   * The activity's explicit ID (`executeWithOptions({ activityId })`), stable per call site.
   * Temporal's default is a sequence number, which shifts when the workflow's code changes.
   */
  activityId: string;
  /**
   * Names a second downstream call the same activity makes for the same intent (the refund
   * cancelling an incomplete PaymentIntent), so each call has a key of its own.
   */
  step?: string;
}

/**
 * The one place every idempotency key is made. A key names a business intent (this order's
 * charge, in this execution), not a transport attempt: every retry of the activity, every
 * worker that picks it up after a crash, and every replay after a reset presents the same key,
 * so Stripe and the ledger answer the second time with the first result.
 */
export function deriveIdempotencyKey({ runId, activityId, step }: IdempotencyKeyParts): string {
  if (!RUN_ID.test(runId)) {
    throw new TypeError(`idempotency key: run ID must be a Temporal run ID (a UUID), got '${runId}'`);
  }
  if (!ACTIVITY_ID.test(activityId)) {
    throw new TypeError(
      `idempotency key: activity ID must be an explicit lower-case ID such as 'charge-payment', got '${activityId}'`,
    );
  }
  if (step !== undefined && !ACTIVITY_ID.test(step)) {
    throw new TypeError(`idempotency key: step must be a lower-case name such as 'cancel', got '${step}'`);
  }
  // 36 + 1 + 100 + 1 + 100 characters at most: always inside Stripe's 255.
  const key = `${runId.toLowerCase()}/${activityId}`;
  return step === undefined ? key : `${key}/${step}`;
}

// The saga's activity timeouts and retry policies by kind of step: Postgres-only steps (local
// activities), the authorization, the capture and the compensations.
import { ActivityCancellationType, type ActivityOptions, type LocalActivityOptions } from '@temporalio/workflow';

// No maximumAttempts: unset is unlimited. Steps stop on non-retryable failures, not on a count.
const RETRY_FOREVER = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' } as const;

/**
 * The worker heartbeats every running activity (src/platform/temporal/heartbeat-interceptor.ts), so an
 * attempt whose worker died is retried after this, not after its start-to-close timeout.
 */
export const HEARTBEAT_TIMEOUT = '10s';

/**
 * The saga's short Postgres-only steps (record and reserve, confirm, release, status moves) run
 * as local activities: inside the workflow task that reaches them, with no activity task and no
 * workflow task of their own; the outcome is recorded as a marker. Each is keyed by the original
 * run ID and a step ID passed in its input (a local activity's own ID is a sequence number), so a
 * worker that dies mid-step has the workflow task retried elsewhere, and the step replays under
 * the same key. Retried until the database answers (an outage must not compensate orders); past
 * the local retry threshold the backoff becomes a server timer. The workflow waits for a step to
 * finish even when cancelled: compensations must not race a step that is still running.
 */
export const POSTGRES_STEP_OPTIONS: LocalActivityOptions = {
  startToCloseTimeout: '30s',
  retry: RETRY_FOREVER,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
};

/**
 * Postgres-only steps run as ordinary activities (the benchmark's reference workflow of the
 * earlier shape): retried until the database answers, waited for when cancelled.
 */
export const FORWARD_ACTIVITY_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '30s',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: RETRY_FOREVER,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
};

/**
 * The authorization. Its Stripe call times out after 20 s, well inside the 60 s start-to-close, so no
 * attempt is still talking to Stripe when Temporal gives up on it at that limit; a dead worker's
 * attempt is given up after the heartbeat timeout. After ten minutes of failed
 * attempts the outcome counts as unknown and the saga compensates; the void (the refund, for a
 * charge) resolves it.
 */
export const PAYMENT_ACTIVITY_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '60s',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  scheduleToCloseTimeout: '10m',
  retry: RETRY_FOREVER,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
};

/**
 * The capture. Its attempts are not bounded here but by the hold itself: each attempt checks the
 * hold's `capture_before` less a margin before it calls Stripe, and past it fails for good, so the
 * saga voids the hold. Giving up sooner would void an order whose money is still there.
 */
export const CAPTURE_ACTIVITY_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '60s',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: RETRY_FOREVER,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
};

/**
 * The settlement of an asynchronous payment reads Stripe (and, past its deadline, cancels under
 * its own key). It is retried until Stripe answers: an outage delays a settlement, it must not
 * compensate the order.
 */
export const SETTLEMENT_ACTIVITY_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '60s',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { ...RETRY_FOREVER, maximumInterval: '1m' },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
};

/** Compensations retry until they succeed, with a bounded interval; only a final failure stops them. */
export const COMPENSATION_ACTIVITY_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '60s',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { ...RETRY_FOREVER, maximumInterval: '1m' },
};

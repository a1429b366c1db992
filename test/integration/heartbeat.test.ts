// Proves a live activity that waits on Stripe longer than its heartbeat timeout keeps beating and
// finishes on its first attempt, instead of being retried while it runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActivityId } from '../../src/domain/activity-ids.js';
import { deriveIdempotencyKey } from '../../src/money/idempotency/idempotency-key.js';
import { keyRecord } from '../support/order-state.js';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';
import { SagaHistory } from '../support/workflow-history.js';

/**
 * The heartbeat timeout lets Temporal give up on a dead worker's attempt in seconds. The other
 * side of that bargain: a live attempt that runs longer than the timeout must keep beating, or
 * Temporal would retry it while it still runs. The worker beats for every activity.
 */
let harness: SagaHarness;
beforeAll(async () => {
  // The production Stripe timeout (20 s), so that only the heartbeat timeout is shorter than the call.
  harness = await startSagaHarness({ stripeTimeoutMs: 20_000 });
});
afterAll(() => harness.close());

describe('heartbeats', () => {
  it('an authorization that waits on Stripe longer than the heartbeat timeout finishes on its first attempt', async () => {
    // 13 s: past the 10 s heartbeat timeout, inside the Stripe client's 20 s timeout.
    harness.emulator.addFault({ kind: 'latency', latencyMs: 13_000, method: 'POST', path: '/v1/payment_intents', count: 1 });
    const order = await harness.newOrder();
    const { handle, runId } = await harness.start(order);

    expect(await handle.result()).toMatchObject({ status: 'completed' });
    const history = await SagaHistory.of(handle);
    expect(history.completedAttempt(ActivityId.authorizePayment)).toBe(1);
    expect(history.previousAttemptEnding(ActivityId.authorizePayment)).toBeNull();
    expect(harness.emulator.counters().faults.latency).toBe(1);
    // One activity attempt registered the key (the Stripe SDK's own retries of the slow request
    // are not activity attempts).
    const authorizationKey = deriveIdempotencyKey({ runId, activityId: ActivityId.authorizePayment });
    expect(await keyRecord(harness.db.pool, 'stripe.authorize', authorizationKey)).toEqual({ state: 'completed', attempts: 1 });
  }, 60_000);
});

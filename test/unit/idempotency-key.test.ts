// Proves idempotency keys are stable across one activity's attempts, distinct between activities
// and executions, insensitive to run-ID case, and within Stripe's 255 characters.
import { describe, expect, it } from 'vitest';
import { deriveIdempotencyKey, MAX_IDEMPOTENCY_KEY_LENGTH } from '../../src/money/idempotency/idempotency-key.js';

const runId = '0f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b';

describe('deriveIdempotencyKey', () => {
  it('is the same for every attempt of one activity in one execution', () => {
    const first = deriveIdempotencyKey({ runId, activityId: 'charge-payment' });
    const retry = deriveIdempotencyKey({ runId, activityId: 'charge-payment' });
    expect(retry).toBe(first);
    expect(first).toBe(`${runId}/charge-payment`);
  });

  it('differs between activities of one execution, so a refund never replays the charge', () => {
    expect(deriveIdempotencyKey({ runId, activityId: 'refund-payment' })).not.toBe(
      deriveIdempotencyKey({ runId, activityId: 'charge-payment' }),
    );
  });

  it('differs between executions, so a new order under a reused workflow ID is a new intent', () => {
    const other = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
    expect(deriveIdempotencyKey({ runId: other, activityId: 'charge-payment' })).not.toBe(
      deriveIdempotencyKey({ runId, activityId: 'charge-payment' }),
    );
  });

  it('does not depend on the run ID letter case Temporal happens to print', () => {
    expect(deriveIdempotencyKey({ runId: runId.toUpperCase(), activityId: 'charge-payment' })).toBe(
      deriveIdempotencyKey({ runId, activityId: 'charge-payment' }),
    );
  });

  it('gives a second call of the same activity its own key through a step name', () => {
    expect(deriveIdempotencyKey({ runId, activityId: 'refund-payment', step: 'cancel' })).toBe(
      `${runId}/refund-payment/cancel`,
    );
  });

  it("stays inside Stripe's 255 characters at the longest IDs it accepts", () => {
    const key = deriveIdempotencyKey({ runId, activityId: `a${'b'.repeat(99)}`, step: `c${'d'.repeat(99)}` });
    expect(key.length).toBeLessThanOrEqual(MAX_IDEMPOTENCY_KEY_LENGTH);
  });

  it.each([
    ['a default sequence-number activity ID', { runId, activityId: '3' }],
    ['an empty activity ID', { runId, activityId: '' }],
    ['a workflow ID instead of a run ID', { runId: 'order-payment-A-1', activityId: 'charge-payment' }],
    ['an over-long activity ID', { runId, activityId: `a${'b'.repeat(100)}` }],
  ])('refuses %s', (_label, parts) => {
    expect(() => deriveIdempotencyKey(parts)).toThrow(TypeError);
  });
});

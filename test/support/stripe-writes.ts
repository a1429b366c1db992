// Test support: an order's Stripe writes grouped by the step whose idempotency key they carried,
// so crash tests count what Stripe executed once per key, whatever else was retried.
import { expect } from 'vitest';
import { deriveIdempotencyKey } from '../../src/money/idempotency/idempotency-key.js';
import type { SagaHarness } from './saga-harness.js';

/** What Stripe did with the requests under one key: how many came, how many it executed, how many it replayed. */
export interface KeyedWrites {
  requests: number;
  executed: number;
  replayed: number;
}

/**
 * The run's Stripe writes (POSTs) by the step whose key they carried. A step retried for a reason
 * beside the one under test (a heartbeat missed on a loaded machine) re-sends under its key and
 * Stripe replays it; so crash tests count what Stripe executed per key, and count requests only
 * where the point is that a retry never called Stripe. Fails, listing every write, if any write
 * carried a key that is not one of these steps'.
 */
export function stripeWritesByStep<Step extends string>(harness: SagaHarness, runId: string, steps: readonly Step[]): Record<Step, KeyedWrites> {
  const keyOf = new Map(steps.map((step) => [deriveIdempotencyKey({ runId, activityId: step }), step]));
  const writes = harness.stripeRequests().filter((request) => request.method === 'POST');
  const listed = writes.map((request) => `${request.path} ${request.status} key=${request.idempotencyKey} replayed=${request.replayed}`).join('\n');
  expect(
    writes.every((request) => request.idempotencyKey !== null && keyOf.has(request.idempotencyKey)),
    `every Stripe write carries the key of one of ${steps.join(', ')}:\n${listed}`,
  ).toBe(true);
  const byStep = Object.fromEntries(steps.map((step) => [step, { requests: 0, executed: 0, replayed: 0 }])) as Record<Step, KeyedWrites>;
  for (const request of writes) {
    const tally = byStep[keyOf.get(request.idempotencyKey ?? '') as Step];
    tally.requests += 1;
    if (request.replayed) tally.replayed += 1;
    else if (request.status === 200) tally.executed += 1;
  }
  return byStep;
}

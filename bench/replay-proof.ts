// Measures what a replay of the real capturePayment activity costs once its key is completed:
// Stripe requests (none expected) and PostgreSQL statements.
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createActivities } from '../src/activities/index.js';
import type { AuthorizationOutcome } from '../src/activities/types.js';
import { createPool } from '../src/platform/db/pool.js';
import { ActivityId } from '../src/domain/activity-ids.js';
import type { OrderInput } from '../src/domain/order-input.js';
import { deriveIdempotencyKey } from '../src/money/idempotency/idempotency-key.js';
import { recordOrder } from '../src/orders/orders.js';
import type { StripeEmulator } from '@order-payments/stripe-emulator';
import { createStripeClient } from '../src/money/stripe/client.js';
import { percentile } from './closed-loop.js';
import { countQueries } from './query-counter.js';

export interface CallCost {
  stripeRequests: number;
  roundTrips: number;
  transactions: number;
  statements: string[];
}

export interface ReplayProof {
  firstCall: CallCost;
  /** Per replay, averaged over `replays` calls; statements of one replay. */
  replay: CallCost & { replays: number; microseconds: number };
  /** EXPLAIN ANALYZE of reading the key record. */
  keyReadPlan: string;
}

/**
 * Runs the real `capturePayment` activity (the step where money moves and the ledger books it)
 * once on a real hold, then again and again for the same completed key, as Temporal would after
 * a worker died between recording the capture and reporting it, and counts what each replay
 * costs: Stripe requests (from the emulator's own counter) and statements sent to PostgreSQL.
 */
export async function proveReplayCost(options: {
  databaseUrl: string;
  emulator: StripeEmulator;
  stripeKey: string;
  replays: number;
}): Promise<ReplayProof> {
  const pool = createPool({ connectionString: options.databaseUrl, max: 1, applicationName: 'order-payments-bench-replay' });
  const counter = countQueries(pool);
  const stripe = createStripeClient({ secretKey: options.stripeKey, apiBase: options.emulator.url });
  const activities = createActivities({ db: pool, stripe });
  const logger = new DefaultLogger('WARN');
  const authorizing = new MockActivityEnvironment({ activityId: ActivityId.authorizePayment, activityType: 'authorizePayment' }, { logger });
  const environment = new MockActivityEnvironment({ activityId: ActivityId.capturePayment, activityType: 'capturePayment' }, { logger });
  const order: OrderInput = {
    orderId: 'replay-proof-1',
    tenantId: 'default',
    customerId: 'cust-bench',
    amount: 2500,
    currency: 'usd',
    paymentMethod: 'pm_card_visa',
    sku: 'bench-sku-0',
    quantity: 1,
  };
  const workflowId = 'order-payment-replay-proof-1';
  const originalRunId = randomUUID();
  try {
    await recordOrder(pool, order, workflowId);
    const hold: AuthorizationOutcome = await authorizing.run(activities.authorizePayment, { order, workflowId, originalRunId });
    if (hold.status !== 'requires_capture') throw new Error(`replay proof: the authorization answered ${hold.status}`);
    const input = { orderId: order.orderId, workflowId, originalRunId, hold };
    const measure = async (calls: number) => {
      const stripeBefore = options.emulator.counters().requests;
      const queriesBefore = counter.read();
      const recording = counter.record();
      const times: number[] = [];
      let statements: string[] = [];
      for (let i = 0; i < calls; i++) {
        const t0 = performance.now();
        await environment.run(activities.capturePayment, input);
        times.push((performance.now() - t0) * 1000);
        if (i === 0) statements = recording.stop();
      }
      const queries = counter.read();
      return {
        stripeRequests: (options.emulator.counters().requests - stripeBefore) / calls,
        roundTrips: (queries.roundTrips - queriesBefore.roundTrips) / calls,
        transactions: (queries.transactions - queriesBefore.transactions) / calls,
        statements,
        microseconds: Math.round(percentile(times, 50)),
      };
    };
    const { microseconds: _first, ...firstCall } = await measure(1);
    // Warm the connection and the JIT before timing replays.
    await measure(20);
    const replay = await measure(options.replays);
    const plan = await pool.query<{ 'QUERY PLAN': string }>(
      `explain (analyze, costs off, timing off, summary off)
       select state, result from activity_idempotency where scope = 'stripe.capture' and idempotency_key = $1`,
      [deriveIdempotencyKey({ runId: originalRunId, activityId: ActivityId.capturePayment })],
    );
    return {
      firstCall,
      replay: { ...replay, replays: options.replays },
      keyReadPlan: plan.rows.map((row) => row['QUERY PLAN'].trim()).join(' / '),
    };
  } finally {
    await pool.end();
  }
}

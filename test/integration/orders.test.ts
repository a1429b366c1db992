// Proves the order's one charge claim against real PostgreSQL: of two keys exactly one wins, the
// winner's retries are no-ops, and an unknown order is a final failure rather than a retried one,
// in the domain and through every activity createActivities builds.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { toActivityFailure } from '../../src/activities/failures.js';
import { createActivities } from '../../src/activities/index.js';
import { createStripeClient } from '../../src/money/stripe/client.js';
import { FailureType, OrderAlreadyChargedError, UnknownOrderError } from '../../src/domain/failures.js';
import { claimCharge, recordOrder } from '../../src/orders/orders.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

async function newOrder(): Promise<string> {
  const orderId = `C-${randomUUID().slice(0, 8)}`;
  await recordOrder(db.pool, { orderId, tenantId: 'default', customerId: 'c-1', amount: 100, currency: 'usd', paymentMethod: 'pm_card_visa', sku: 'sku-c', quantity: 1 }, `order-payment-${orderId}`);
  return orderId;
}

describe('claimCharge', () => {
  it('of two keys racing for one order exactly one wins; its retry answers claimedBefore', async () => {
    const orderId = await newOrder();
    const outcomes = await Promise.allSettled([claimCharge(db.pool, orderId, 'run-a/capture-payment'), claimCharge(db.pool, orderId, 'run-b/capture-payment')]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const loser = outcomes.find((outcome) => outcome.status === 'rejected');
    expect(loser?.reason).toBeInstanceOf(OrderAlreadyChargedError);
    const winner = outcomes[0].status === 'fulfilled' ? 'run-a/capture-payment' : 'run-b/capture-payment';
    await expect(claimCharge(db.pool, orderId, winner)).resolves.toEqual({ claimedBefore: true });
  });

  it('an order that was never recorded fails with UnknownOrder, non-retryable', async () => {
    const missing = `C-missing-${randomUUID().slice(0, 8)}`;
    const refusal = await claimCharge(db.pool, missing, 'run-c/capture-payment').catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(UnknownOrderError);
    expect(toActivityFailure(refusal)).toMatchObject({ type: FailureType.UnknownOrder, nonRetryable: true });
    const { rowCount } = await db.pool.query('select 1 from orders where order_id = $1', [missing]);
    expect(rowCount).toBe(0);
  });

  it('every activity createActivities builds fails a final error as non-retryable: confirming an order that is not recorded', async () => {
    // Stripe is not called by confirmOrder; the client points nowhere.
    const activities = createActivities({ db: db.pool, stripe: createStripeClient({ secretKey: 'sk_test_unused', apiBase: 'http://127.0.0.1:9', timeoutMs: 1_000 }) });
    const refusal = await activities.confirmOrder({ orderId: 'C-never-recorded' }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ApplicationFailure);
    expect(refusal).toMatchObject({ type: FailureType.OrderNotConfirmable, nonRetryable: true, details: [{ status: null }] });
  });
});

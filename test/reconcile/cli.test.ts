// Proves `npm run reconcile`'s verdicts and exit codes: 0 when I1–I9 hold, 1 naming the invariant
// and order broken (I1, I3, I8), 2 for bad configuration, 3 when the check cannot run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/platform/db/transaction.js';
import type { OrderInput } from '../../src/domain/order-input.js';
import { postLedgerTransaction } from '../../src/money/ledger/ledger.js';
import type { ReconciliationSummary } from '../../src/operations/reconcile/summary.js';
import { runCli } from '../support/run-cli.js';
import { startSagaHarness, STRIPE_TEST_KEY, type SagaHarness } from '../support/saga-harness.js';

let harness: SagaHarness;
let env: Record<string, string>;
let completed: OrderInput;
let declined: OrderInput;

beforeAll(async () => {
  harness = await startSagaHarness();
  env = { DATABASE_URL: harness.db.url, STRIPE_SECRET_KEY: STRIPE_TEST_KEY, STRIPE_API_BASE: harness.emulator.url };
  completed = await harness.newOrder();
  declined = await harness.newOrder({ paymentMethod: 'pm_card_visa_chargeDeclinedInsufficientFunds' });
  await Promise.all([completed, declined].map(async (order) => (await harness.start(order)).handle.result()));
});
afterAll(() => harness.close());

const reconcile = (args: string[] = [], overrides: Record<string, string> = {}) =>
  runCli('src/reconcile.ts', args, { ...env, ...overrides });

async function reconcileJson(args: string[] = []): Promise<{ code: number; summary: ReconciliationSummary }> {
  const result = await reconcile(['--json', ...args]);
  expect(result.stderr).toBe('');
  return { code: result.code, summary: JSON.parse(result.stdout) as ReconciliationSummary };
}

describe('npm run reconcile', () => {
  it('exits 0 with orders counted by status when I1-I9 hold', async () => {
    const text = await reconcile();
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('2 order(s) checked');
    expect(text.stdout).toMatch(/completed\s+1/);
    expect(text.stdout).toMatch(/declined\s+1/);
    expect(text.stdout).toContain('no violations');

    const { code, summary } = await reconcileJson();
    expect(code).toBe(0);
    expect(summary).toMatchObject({ ok: true, ordersChecked: 2, ordersByStatus: { completed: 1, declined: 1 }, violations: [] });
  });

  it('exits 1 naming I1 and the order when Stripe holds a second successful charge for it', async () => {
    // A charge made outside the saga, say by hand in the Dashboard, for an order already paid.
    await harness.stripe.paymentIntents.create({
      amount: completed.amount,
      currency: completed.currency,
      payment_method: 'pm_card_visa',
      confirm: true,
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
      metadata: { order_id: completed.orderId },
    });

    const text = await reconcile();
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('I1 (at most one capture (one successful charge) per order): 1 order(s)');
    expect(text.stdout).toContain(`${completed.orderId}  2 captured PaymentIntents`);

    const { code, summary } = await reconcileJson();
    expect(code).toBe(1);
    expect(summary.ok).toBe(false);
    expect(summary.violationsByInvariant.I1).toEqual([completed.orderId]);
    // The stray charge has no ledger twin either.
    expect(summary.violationsByInvariant.I3).toEqual([completed.orderId]);
  });

  it('exits 1 naming I8 when a finished order still has a hold open at Stripe', async () => {
    // A hold placed outside the saga for an order that has finished, and never captured or voided.
    const stray = await harness.stripe.paymentIntents.create({
      amount: declined.amount,
      currency: declined.currency,
      payment_method: 'pm_card_visa',
      confirm: true,
      capture_method: 'manual',
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
      metadata: { order_id: declined.orderId },
    });

    const { code, summary } = await reconcileJson(['--order-id', declined.orderId]);

    expect(code).toBe(1);
    expect(summary.violationsByInvariant.I8).toEqual([declined.orderId]);
    expect(summary.violations).toContainEqual({
      invariant: 'I8',
      orderId: declined.orderId,
      message: `declined order's PaymentIntent ${stray.id} is still requires_capture`,
    });

    // Voided, it no longer outlives its order.
    await harness.stripe.paymentIntents.cancel(stray.id);
    const after = await reconcileJson(['--order-id', declined.orderId]);
    expect(after.summary.violationsByInvariant.I8).toBeUndefined();
  });

  it('exits 1 naming I3 when the ledger books a Stripe object that does not exist', async () => {
    await withTransaction(harness.db.pool, (client) =>
      postLedgerTransaction(client, {
        orderId: declined.orderId,
        kind: 'refund',
        amountMinor: declined.amount,
        currency: declined.currency,
        stripeObjectId: 're_never_made_by_stripe',
        idempotencyKey: 'manual-entry/record-refund',
      }),
    );

    const { code, summary } = await reconcileJson(['--order-id', declined.orderId]);

    expect(code).toBe(1);
    expect(summary.ordersChecked).toBe(1);
    expect(summary.violationsByInvariant.I3).toEqual([declined.orderId]);
    expect(summary.violations).toContainEqual({
      invariant: 'I3',
      orderId: declined.orderId,
      message: 'ledger refund re_never_made_by_stripe has no Stripe object',
    });
  });

  it('checks only the orders given with --order-id (repeatable)', async () => {
    const clean = await harness.newOrder();
    const other = await harness.newOrder();
    await Promise.all([clean, other].map(async (order) => (await harness.start(order)).handle.result()));

    const { code, summary } = await reconcileJson(['--order-id', clean.orderId, '--order-id', other.orderId]);

    expect(code).toBe(0);
    expect(summary.orders.map((order) => order.orderId).sort()).toEqual([clean.orderId, other.orderId].sort());
  });

  it('exits 2 on bad configuration, naming every setting, and on a malformed --order-id', async () => {
    const config = await reconcile([], { DATABASE_URL: 'mysql://nope', STRIPE_SECRET_KEY: 'sk_live_123' });
    expect(config.code).toBe(2);
    expect(config.stderr).toContain('DATABASE_URL: must be a PostgreSQL URL');
    expect(config.stderr).toContain('STRIPE_SECRET_KEY: must be a test-mode key');

    const orderId = await reconcile(['--order-id', 'a/b']);
    expect(orderId.code).toBe(2);
    expect(orderId.stderr).toContain('order ID must be 1-64 characters');
  });

  it('exits 3 when the check cannot run (the database is unreachable), never 0', async () => {
    const result = await reconcile([], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/payments' });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('the check could not run');
  });
});

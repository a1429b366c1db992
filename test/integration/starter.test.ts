// Proves `npm run start` is safe to repeat (one run, one charge), refuses a reused order ID (exit
// 3), reports outcomes early, copes with no worker; and `npm run worker` refuses bad configuration.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OrderInput } from '../../src/domain/order-input.js';
import { availableStock, setStock } from '../../src/orders/stock.js';
import { runCli } from '../support/run-cli.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';

let harness: SagaHarness;
let env: Record<string, string>;

beforeAll(async () => {
  harness = await startSagaHarness();
  env = { TEMPORAL_ADDRESS: harness.temporalAddress, TEMPORAL_NAMESPACE: 'default', TEMPORAL_TASK_QUEUE: harness.taskQueue };
});
afterAll(() => harness.close());

function flags(order: OrderInput): string[] {
  return [
    '--order-id', order.orderId,
    '--customer-id', order.customerId,
    '--amount', String(order.amount),
    '--currency', order.currency,
    '--payment-method', order.paymentMethod,
    '--sku', order.sku,
    '--quantity', String(order.quantity),
  ];
}

describe('npm run start', () => {
  it('run twice for one order: one workflow, one charge, and the second run reports the first result', async () => {
    const order = await harness.newOrder();
    const first = await runCli('src/starter.ts', [...flags(order), '--wait', '--json'], env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const firstReport = JSON.parse(first.stdout) as { outcome: string; runId: string; uiUrl: string; result: { status: string; paymentIntentId: string } };
    expect(firstReport).toMatchObject({ outcome: 'started', workflowId: `order-payment-${order.orderId}`, result: { status: 'completed' } });
    expect(firstReport.uiUrl).toContain(`/workflows/order-payment-${order.orderId}/${firstReport.runId}`);

    const second = await runCli('src/starter.ts', [...flags(order), '--json'], env);
    expect(second.code).toBe(0);
    const secondReport = JSON.parse(second.stdout) as typeof firstReport;
    expect(secondReport).toMatchObject({ outcome: 'already-finished', runId: firstReport.runId, result: firstReport.result });

    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.succeeded.map((intent) => intent.id)).toEqual([firstReport.result.paymentIntentId]);
    await harness.expectInvariants([order.orderId]);
  });

  it('run twice at once for one order: both attach to one run, one charge', async () => {
    const order = await harness.newOrder();
    const [a, b] = await Promise.all([
      runCli('src/starter.ts', [...flags(order), '--wait', '--json'], env),
      runCli('src/starter.ts', [...flags(order), '--wait', '--json'], env),
    ]);
    expect([a.code, b.code]).toEqual([0, 0]);
    const reports = [a, b].map((run) => JSON.parse(run.stdout) as { runId: string; result: { status: string } });
    expect(reports[0]?.runId).toBe(reports[1]?.runId);
    expect(reports.map((report) => report.result.status)).toEqual(['completed', 'completed']);
    expect((await stripeObjectsFor(harness.stripe, order.orderId)).succeeded).toHaveLength(1);
  });

  it('refuses the same order ID for a different order (I7) and starts nothing new', async () => {
    const order = await harness.newOrder();
    expect((await runCli('src/starter.ts', [...flags(order), '--wait'], env)).code).toBe(0);
    const reused = await runCli('src/starter.ts', flags({ ...order, amount: order.amount + 1 }), env);
    expect(reused.code).toBe(3);
    expect(reused.stderr).toContain(`order ID '${order.orderId}' is already used by a different order`);
    expect((await stripeObjectsFor(harness.stripe, order.orderId)).succeeded).toHaveLength(1);
  });

  it('without --wait prints the payment outcome as soon as the hold is placed, and the saga goes on to capture', async () => {
    const order = await harness.newOrder();
    const run = await runCli('src/starter.ts', [...flags(order), '--json'], env);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { outcome: string; runId: string; payment: { status: string; paymentIntentId: string }; result?: unknown };
    expect(report).toMatchObject({ outcome: 'started', payment: { status: 'authorized' } });
    expect(report.result).toBeUndefined();
    const result = await harness.handle(order).result();
    expect(result).toMatchObject({ status: 'completed', paymentIntentId: report.payment.paymentIntentId });
  });

  it('prints a declined card as declined with its code, exit 0, nothing charged', async () => {
    const order = await harness.newOrder({ paymentMethod: 'pm_card_chargeDeclined' });
    const run = await runCli('src/starter.ts', flags(order), env);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/payment declined \(\w+\); nothing was charged/);
    expect((await stripeObjectsFor(harness.stripe, order.orderId)).succeeded).toHaveLength(0);
  });

  it('with no worker: says the outcome is not known yet and exits 0; a different order under the running ID exits 3; the worker back, a rerun attaches and prints it', async () => {
    await harness.stopWorker();
    try {
      const order = await harness.newOrder();
      const waiting = await runCli('src/starter.ts', [...flags(order), '--outcome-wait-ms', '500'], env);
      expect(waiting.code).toBe(0);
      expect(waiting.stdout).toContain('payment not known after 500 ms; the saga goes on');
      const runId = /run ID {2}(\S+)/.exec(waiting.stdout)?.[1];
      expect(runId).toBeDefined();
      expect((await harness.handle(order).describe()).status.name).toBe('RUNNING');

      const reused = await runCli('src/starter.ts', [...flags({ ...order, quantity: order.quantity + 1 }), '--outcome-wait-ms', '500'], env);
      expect(reused.code).toBe(3);
      expect(reused.stderr).toContain(`order ID '${order.orderId}' is already used by a different order`);

      await harness.startWorker();
      const again = await runCli('src/starter.ts', [...flags(order), '--json'], env);
      expect(again.code).toBe(0);
      // The same run (attached, or already finished by the time the rerun looked), and its outcome.
      expect(JSON.parse(again.stdout)).toMatchObject({ runId, payment: { status: 'authorized' } });
      expect(await harness.handle(order).result()).toMatchObject({ status: 'completed' });
      expect((await stripeObjectsFor(harness.stripe, order.orderId)).succeeded).toHaveLength(1);
    } finally {
      await harness.startWorker();
    }
  });

  it.each([
    ['an amount over 99999999', ['--amount', '100000000'], 'amount must be at most 99999999'],
    ['a fractional amount', ['--amount', '19.99'], '--amount must be a whole number'],
    ['an unsupported currency', ['--currency', 'xyz'], 'currency must be a three-letter ISO 4217 code that Stripe supports'],
    ['an order ID with a slash', ['--order-id', 'a/b'], 'order ID must be 1-64 characters'],
    ['an amount below Stripe’s minimum for the currency', ['--amount', '49'], 'amount must be at least 50 minor units for USD'],
  ])('exits 2 on %s, before contacting Temporal', async (_label, override, message) => {
    const order = await harness.newOrder();
    const args = flags(order);
    const at = args.indexOf(override[0] ?? '');
    args.splice(at, 2, ...override);
    // An address nothing listens on: reaching Temporal would fail differently (exit 1).
    const result = await runCli('src/starter.ts', args, { ...env, TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it("--tenant reserves that tenant's stock only: another tenant's units of the same SKU are out of its reach", async () => {
    const order = await harness.newOrder();
    await setStock(harness.db.pool, order.sku, 2, 'tenant-starter');
    const run = await runCli('src/starter.ts', [...flags(order), '--tenant', 'tenant-starter', '--quantity', '2', '--wait', '--json'], env);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ result: { status: 'completed' } });
    // The default tenant's 10 units (harness.newOrder) are untouched; the named tenant's are taken.
    expect([await availableStock(harness.db.pool, 'default', order.sku), await availableStock(harness.db.pool, 'tenant-starter', order.sku)]).toEqual([10, 0]);
    const { rows } = await harness.db.pool.query('select tenant_id from orders where order_id = $1', [order.orderId]);
    expect(rows).toEqual([{ tenant_id: 'tenant-starter' }]);
  });

  it('exits 2 naming a missing flag', async () => {
    const result = await runCli('src/starter.ts', ['--order-id', 'x'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("required option '--customer-id <id>' not specified");
  });
});

describe('npm run worker', () => {
  it('refuses bad configuration with every problem named, and starts nothing', async () => {
    const result = await runCli('src/worker.ts', [], {
      DATABASE_URL: 'mysql://nope',
      STRIPE_SECRET_KEY: 'sk_live_123',
      TEMPORAL_TASK_QUEUE: 'bad queue',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('TEMPORAL_TASK_QUEUE');
    expect(result.stderr).toContain('DATABASE_URL: must be a PostgreSQL URL');
    expect(result.stderr).toContain('STRIPE_SECRET_KEY: must be a test-mode key');
  });
});

// Proves the worker's /metrics serves the SDK's runtime metrics and the saga's own (outcomes,
// Stripe timings, replays, compensations, settlement waits), with no order or customer labels.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { findFreePort } from '../../src/operations/stack/ports.js';
import { SagaMetric } from '../../src/platform/telemetry/metric-names.js';
import { hasMetric, sampleSum, scrape } from '../support/prometheus-text.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { startWorkerProcess, stopWorkerProcesses, type WorkerProcess } from '../support/worker-process.js';
import { endingOf } from '../support/workflow-ending.js';

/**
 * The worker process's /metrics (issue 15): the SDK's runtime metrics and the saga's own, on one
 * endpoint, after real orders through a real worker, Temporal, PostgreSQL and the Stripe emulator.
 */
let harness: SagaHarness;
let worker: WorkerProcess;
let metricsUrl: string;

beforeAll(async () => {
  harness = await startSagaHarness({ worker: false });
  const port = await findFreePort();
  metricsUrl = `http://127.0.0.1:${port}/metrics`;
  // A short recheck: no webhook reaches this worker's orders, so an asynchronous payment is settled by asking Stripe.
  worker = await startWorkerProcess(harness, { env: { WORKER_METRICS_PORT: String(port), SETTLEMENT_RECHECK_MS: '1000' } });
});
afterAll(async () => {
  await stopWorkerProcesses();
  await harness.close();
});

const metrics = () => scrape(metricsUrl);
const orderIds: string[] = [];

describe('the worker serves Prometheus metrics on 127.0.0.1:WORKER_METRICS_PORT/metrics', () => {
  it('a completed order counts completed; its Stripe requests are timed by endpoint; the SDK runtime metrics are there too', async () => {
    const before = await metrics();
    const order = await harness.newOrder();
    orderIds.push(order.orderId);
    const started = await harness.start(order);
    expect((await started.handle.result()).status).toBe('completed');

    await vi.waitFor(async () => {
      const after = await metrics();
      expect(sampleSum(after, SagaMetric.orders, { outcome: 'completed' }) - sampleSum(before, SagaMetric.orders, { outcome: 'completed' })).toBe(1);
      expect(sampleSum(after, `${SagaMetric.stripeRequestDuration}_count`, { endpoint: 'POST /v1/payment_intents', outcome: '2xx' })).toBeGreaterThanOrEqual(1);
      expect(sampleSum(after, `${SagaMetric.stripeRequestDuration}_count`, { endpoint: 'POST /v1/payment_intents/{id}/capture', outcome: '2xx' })).toBe(1);
    }, { timeout: 10_000, interval: 200 });
    const after = await metrics();
    expect(sampleSum(after, SagaMetric.replays)).toBe(0);
    expect(sampleSum(after, SagaMetric.compensations)).toBe(0);
    // The SDK's own runtime metrics, from the same exporter.
    expect(hasMetric(after, 'temporal_workflow_completed')).toBe(true);
    expect(hasMetric(after, 'temporal_activity_execution_latency_bucket')).toBe(true);
  });

  it("after a Stripe response was dropped, the worker shows one replay answered by Stripe", async () => {
    const order = await harness.newOrder();
    orderIds.push(order.orderId);
    harness.emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/payment_intents', orderId: order.orderId, count: 1 });
    const started = await harness.start(order);
    expect((await started.handle.result()).status).toBe('completed');
    expect((await stripeObjectsFor(harness.stripe, order.orderId)).intents).toHaveLength(1);

    await vi.waitFor(async () => {
      const after = await metrics();
      expect(sampleSum(after, SagaMetric.replays, { answered_by: 'stripe' })).toBe(1);
      // The lost answer is timed as an error; the replay that answered the retry as a 2xx.
      expect(sampleSum(after, `${SagaMetric.stripeRequestDuration}_count`, { endpoint: 'POST /v1/payment_intents', outcome: 'error' })).toBe(1);
      expect(sampleSum(after, SagaMetric.replays, { answered_by: 'stripe', activityType: 'authorizePayment' })).toBe(1);
      expect(sampleSum(after, SagaMetric.orders, { outcome: 'completed' })).toBe(2);
    }, { timeout: 10_000, interval: 200 });
  });

  it('an order cancelled before its capture shows the compensations by kind: the hold voided, the stock released, no refund', async () => {
    const order = await harness.newOrder();
    orderIds.push(order.orderId);
    harness.emulator.addFault({ kind: 'fail_before_execution', status: 500, method: 'POST', path: '/v1/payment_intents/:id/capture', orderId: order.orderId, count: 1_000 });
    const before = harness.emulator.counters().faults.fail_before_execution;
    const started = await harness.start(order);
    await vi.waitFor(() => {
      expect(harness.emulator.counters().faults.fail_before_execution - before).toBeGreaterThanOrEqual(2);
    }, { timeout: 30_000, interval: 50 });
    await started.handle.cancel();
    expect(await endingOf(started.handle)).toEqual({ ended: 'cancelled' });

    await vi.waitFor(async () => {
      const after = await metrics();
      expect(sampleSum(after, SagaMetric.compensations, { kind: 'void' })).toBe(1);
      expect(sampleSum(after, SagaMetric.compensations, { kind: 'release' })).toBe(1);
      expect(sampleSum(after, SagaMetric.compensations, { kind: 'refund' })).toBe(0);
      expect(sampleSum(after, SagaMetric.orders, { outcome: 'compensated', workflowType: 'orderPaymentSaga' })).toBe(1);
      expect(sampleSum(after, SagaMetric.keysFenced, { scope: 'stripe.capture' })).toBe(1);
      expect(sampleSum(after, `${SagaMetric.stripeRequestDuration}_count`, { endpoint: 'POST /v1/payment_intents/{id}/capture', outcome: '5xx' })).toBeGreaterThanOrEqual(2);
    }, { timeout: 10_000, interval: 200 });
    await harness.expectInvariants(orderIds);
  });

  it('an order cancelled while Stripe captures: the capture lands and is refunded, counted as one refund', async () => {
    const order = await harness.newOrder();
    orderIds.push(order.orderId);
    harness.emulator.addFault({ kind: 'latency', method: 'POST', path: '/v1/payment_intents/:id/capture', orderId: order.orderId, latencyMs: 3_000 });
    const before = harness.emulator.counters().faults.latency;
    const started = await harness.start(order);
    await vi.waitFor(() => {
      expect(harness.emulator.counters().faults.latency - before).toBe(1);
    }, { timeout: 30_000, interval: 50 });
    await started.handle.cancel();
    expect(await endingOf(started.handle)).toEqual({ ended: 'cancelled' });
    expect((await stripeObjectsFor(harness.stripe, order.orderId)).refunds).toHaveLength(1);

    await vi.waitFor(async () => {
      const after = await metrics();
      expect(sampleSum(after, SagaMetric.compensations, { kind: 'refund' })).toBe(1);
      expect(sampleSum(after, SagaMetric.compensations, { kind: 'release' })).toBe(2);
      // Captured, so nothing was left to void: the void step found the capture and did nothing.
      expect(sampleSum(after, SagaMetric.compensations, { kind: 'void' })).toBe(1);
      expect(sampleSum(after, SagaMetric.orders, { outcome: 'compensated' })).toBe(2);
    }, { timeout: 10_000, interval: 200 });
  });

  it('an asynchronous payment whose webhook never came: the wait ended by the recheck, and how long it took to settle', async () => {
    harness.emulator.setAsyncSettleDelay(300);
    const order = await harness.newOrder({ paymentMethod: 'pm_card_async_success' });
    orderIds.push(order.orderId);
    const started = await harness.start(order);
    expect((await started.handle.result()).status).toBe('completed');

    await vi.waitFor(async () => {
      const after = await metrics();
      expect(sampleSum(after, SagaMetric.settlementWaits, { ended_by: 'recheck' })).toBeGreaterThanOrEqual(1);
      expect(sampleSum(after, SagaMetric.settlementWaits, { ended_by: 'webhook' })).toBe(0);
      expect(sampleSum(after, `${SagaMetric.settlementDuration}_count`, { trigger: 'recheck' })).toBe(1);
      // Settled after at least one recheck interval.
      expect(sampleSum(after, `${SagaMetric.settlementDuration}_sum`, { trigger: 'recheck' })).toBeGreaterThanOrEqual(1);
      expect(sampleSum(after, SagaMetric.orders, { outcome: 'completed' })).toBe(3);
    }, { timeout: 10_000, interval: 200 });
  });

  it('a decline and an out-of-stock order are business outcomes: counted by outcome, never as activity failures or warnings', async () => {
    const before = await metrics();
    const failedAttempts = (text: string, activity: string) => sampleSum(text, 'temporal_activity_execution_failed', { activity_type: activity });
    // The record-and-reserve step is a local activity, counted by the SDK's local-activity counter.
    const failedLocalAttempts = (text: string, activity: string) => sampleSum(text, 'temporal_local_activity_execution_failed', { activity_type: activity });
    const declined = await harness.newOrder({ paymentMethod: 'pm_card_visa_chargeDeclinedInsufficientFunds' });
    const unfillable = await harness.newOrder({ quantity: 11 });
    orderIds.push(declined.orderId, unfillable.orderId);
    expect((await (await harness.start(declined)).handle.result()).status).toBe('declined');
    expect((await (await harness.start(unfillable)).handle.result()).status).toBe('compensated');

    await vi.waitFor(async () => {
      const after = await metrics();
      expect(sampleSum(after, SagaMetric.orders, { outcome: 'declined' }) - sampleSum(before, SagaMetric.orders, { outcome: 'declined' })).toBe(1);
      expect(sampleSum(after, SagaMetric.orders, { outcome: 'compensated' }) - sampleSum(before, SagaMetric.orders, { outcome: 'compensated' })).toBe(1);
    }, { timeout: 10_000, interval: 200 });
    const after = await metrics();
    // BENIGN: the SDK leaves them out of its failure counter and logs them at DEBUG, below the worker's level.
    expect(failedAttempts(after, 'authorizePayment')).toBe(failedAttempts(before, 'authorizePayment'));
    expect(failedLocalAttempts(after, 'recordOrderAndReserveStock')).toBe(failedLocalAttempts(before, 'recordOrderAndReserveStock'));
    const warnings = worker
      .output()
      .split('\n')
      .filter((line) => line.includes('"msg":"Activity failed"') && (line.includes(declined.orderId) || line.includes(unfillable.orderId) || /authorizePayment|recordOrderAndReserveStock/.test(line)));
    expect(warnings).toEqual([]);
    // The counter is live: the capture attempts Stripe failed with a 500 earlier in this file were counted.
    expect(failedAttempts(after, 'capturePayment')).toBeGreaterThanOrEqual(2);
  });

  it('no metric carries an order ID, a customer, a payment method or an email', async () => {
    const text = await metrics();
    for (const orderId of orderIds) expect(text).not.toContain(orderId);
    expect(text).not.toMatch(/pm_card|cust-1|@|pi_[A-Za-z0-9]{6,}/);
    expect(worker.pid).toBeGreaterThan(0);
  });
});

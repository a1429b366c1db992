// Test support: the real components one test file runs the saga on (its own database, Stripe
// emulator, task queue and worker on the shared dev server), and what Stripe holds for an order.
import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import type Stripe from 'stripe';
import { expect, inject } from 'vitest';
import type { ActivityDeps } from '../../src/activities/index.js';
import type { OrderInput } from '../../src/domain/order-input.js';
import { setStock } from '../../src/orders/stock.js';
import { checkInvariants, type ReconciliationReport } from '../../src/operations/reconcile/invariant-checker.js';
import { startOrder, type StartedOrder } from '../../src/saga-client/start-order.js';
import { startStripeEmulator, type RequestLogLine, type StripeEmulator } from '@order-payments/stripe-emulator';
import { createStripeClient } from '../../src/money/stripe/client.js';
import { createOrderWorker } from '../../src/platform/temporal/order-worker.js';
import type { WorkerDeployment } from '../../src/platform/temporal/worker-deployment.js';
import { becomeCurrent } from '../../src/operations/deploy/deployment-routing.js';
import type { orderPaymentSaga } from '../../src/workflows/index.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { developmentEncryption } from './payload-keys.js';
import { dataConverterFor } from '../../src/platform/temporal/payload-encryption/data-converter.js';
import type { PayloadEncryptionSettings } from '../../src/platform/temporal/payload-encryption/settings.js';
import type { DataConverter } from '@temporalio/common';

export const STRIPE_TEST_KEY = 'sk_test_order_payments_suite';

export interface SagaHarness {
  db: TestDatabase;
  emulator: StripeEmulator;
  /** Every request the emulator answered, oldest first: method, path, status, key, replayed. */
  stripeRequests(): readonly RequestLogLine[];
  stripe: Stripe;
  client: Client;
  /** The encrypting data converter the client and the in-process worker use. */
  dataConverter: DataConverter;
  taskQueue: string;
  /** The worker deployment version this file's workers poll as (its own deployment, this source's build). */
  deployment: WorkerDeployment;
  temporalAddress: string;
  /** A valid order with a fresh ID and a SKU stocked for it. */
  newOrder(overrides?: Partial<OrderInput>): Promise<OrderInput>;
  start(order: OrderInput): Promise<StartedOrder>;
  handle(order: OrderInput): WorkflowHandle<typeof orderPaymentSaga>;
  /** Runs the invariant checker over these orders and fails the test on any violation. */
  expectInvariants(orderIds: string[]): Promise<ReconciliationReport>;
  /** Starts (or restarts) the in-process worker. */
  startWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** Start an in-process worker. Default true; crash tests run workers as child processes. */
  worker?: boolean;
  deps?: Partial<ActivityDeps>;
  /** The worker's Stripe client timeout. Default 10 s, shorter than production's 20 s, to keep tests quick. */
  stripeTimeoutMs?: number;
  /** The payload keys of the client and the in-process worker. Default the development ring, as spawned processes use. */
  encryption?: PayloadEncryptionSettings;
}

/**
 * Real components for one test file: its own PostgreSQL database, its own Stripe emulator,
 * its own task queue and worker on the run's shared Temporal dev server.
 */
export async function startSagaHarness(options: HarnessOptions = {}): Promise<SagaHarness> {
  quietTemporalLogs();
  const temporalAddress = inject('temporalAddress');
  const db = await createTestDatabase();
  const stripeRequests: RequestLogLine[] = [];
  const emulator = await startStripeEmulator({ port: 0, logger: { info: (line) => stripeRequests.push(line) } });
  const stripe = createStripeClient({ secretKey: STRIPE_TEST_KEY, apiBase: emulator.url, timeoutMs: options.stripeTimeoutMs ?? 10_000 });
  const connection = await Connection.connect({ address: temporalAddress });
  const dataConverter = dataConverterFor(options.encryption ?? developmentEncryption());
  const client = new Client({ connection, namespace: 'default', dataConverter });
  const nativeConnection = await NativeConnection.connect({ address: temporalAddress });
  const taskQueue = `test-${randomUUID()}`;
  // A deployment per file: a file that rolls builds out (test/integration/rollout.test.ts) moves no one else's runs.
  const deployment: WorkerDeployment = { deploymentName: taskQueue, buildId: inject('workflowBuildId') };
  let worker: { instance: Worker; running: Promise<void> } | null = null;

  const harness: SagaHarness = {
    db,
    emulator,
    stripeRequests: () => stripeRequests,
    stripe,
    client,
    dataConverter,
    taskQueue,
    deployment,
    temporalAddress,
    async newOrder(overrides = {}) {
      const orderId = `T-${randomUUID().slice(0, 13)}`;
      const order: OrderInput = {
        orderId,
        tenantId: 'default',
        customerId: 'cust-1',
        amount: 2500,
        currency: 'usd',
        paymentMethod: 'pm_card_visa',
        sku: `sku-${orderId}`,
        quantity: 1,
        ...overrides,
      };
      if (!overrides.sku) await setStock(db.pool, order.sku, 10);
      return order;
    },
    start: (order) => startOrder(client, taskQueue, order),
    handle: (order) => client.workflow.getHandle<typeof orderPaymentSaga>(`order-payment-${order.orderId}`),
    async expectInvariants(orderIds) {
      const report = await checkInvariants({ db: db.pool, stripe, orderIds });
      expect(report.violations).toEqual([]);
      return report;
    },
    async startWorker() {
      if (worker) return;
      const instance = await createOrderWorker({
        connection: nativeConnection,
        namespace: 'default',
        taskQueue,
        // The worker's own login (migration 017): the activities run with the worker's grants only.
        deps: { db: db.servicePool('worker'), stripe, ...options.deps },
        dataConverter,
        deployment,
        workflowBundle: { codePath: inject('workflowBundlePath') },
        shutdownGraceTimeMs: 5_000,
      });
      worker = { instance, running: instance.run() };
      // As a development worker does (WORKER_ROLLOUT=auto): its build becomes current once it polls.
      await becomeCurrent(client, deployment, 'test harness');
    },
    async stopWorker() {
      if (!worker) return;
      worker.instance.shutdown();
      await worker.running;
      worker = null;
    },
    async close() {
      await harness.stopWorker();
      await nativeConnection.close();
      await connection.close();
      await emulator.close();
      await db.drop();
    },
  };
  if (options.worker ?? true) await harness.startWorker();
  return harness;
}

/**
 * What Stripe holds for one order: every PaymentIntent and Refund carrying its order_id, with the
 * PaymentIntents sorted by what they are now: captured (`succeeded`), still held
 * (`requires_capture`), or voided (`canceled`).
 */
export async function stripeObjectsFor(stripe: Stripe, orderId: string) {
  const intents = await stripe.paymentIntents.search({ query: `metadata['order_id']:'${orderId}'`, limit: 100 });
  const refunds = (await stripe.refunds.list({ limit: 100 })).data.filter((refund) => refund.metadata?.order_id === orderId);
  return {
    intents: intents.data,
    succeeded: intents.data.filter((intent) => intent.status === 'succeeded'),
    held: intents.data.filter((intent) => intent.status === 'requires_capture'),
    canceled: intents.data.filter((intent) => intent.status === 'canceled'),
    refunds,
  };
}

let runtimeInstalled = false;
/**
 * In-process workers log errors only: the tests provoke transient failures on purpose (Stripe 500s,
 * dropped responses, crashes), and the SDK logs each failed attempt as a warning. Declines and
 * out-of-stock need no silencing: they are BENIGN and log at DEBUG (test/integration/worker-metrics.test.ts).
 */
function quietTemporalLogs(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({ logger: new DefaultLogger('ERROR') });
}

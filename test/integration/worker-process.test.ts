// Proves the worker process on SIGTERM lets an in-flight authorization finish and record before
// exiting cleanly, and that its logs carry the IDs and the key.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let harness: SagaHarness;

beforeAll(async () => {
  harness = await startSagaHarness({ worker: false });
});
afterAll(() => harness.close());

function startWorkerProcess() {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: harness.db.serviceUrl('worker'),
      STRIPE_SECRET_KEY: 'sk_test_order_payments_suite',
      STRIPE_API_BASE: harness.emulator.url,
      TEMPORAL_ADDRESS: harness.temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: harness.taskQueue,
      WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
      WORKER_METRICS_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let waited = 0; waited < 60_000; waited += 100) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('the worker process', () => {
  it('on SIGTERM lets the in-flight authorization finish and record, then exits cleanly; logs carry IDs and key', async () => {
    const worker = startWorkerProcess();
    await until(() => worker.output().includes('worker started'), 'the worker to start');
    const order = await harness.newOrder();
    harness.emulator.addFault({ kind: 'latency', method: 'POST', path: '/v1/payment_intents', orderId: order.orderId, latencyMs: 2_000 });
    const started = await harness.start(order);
    await until(() => worker.output().includes('authorizing PaymentIntent'), 'the authorization to be in flight');

    worker.child.kill('SIGTERM');
    const [code] = (await once(worker.child, 'exit')) as [number | null];
    expect(code).toBe(0);
    expect(worker.output()).toContain('worker stopped');

    // The authorization that was in flight at SIGTERM finished and was recorded by that worker.
    const { rows } = await harness.db.pool.query<{ state: string; status: string }>(
      `select state, result->>'status' as status from activity_idempotency where scope = 'stripe.authorize' and idempotency_key = $1`,
      [`${started.runId}/authorize-payment`],
    );
    expect(rows).toEqual([{ state: 'completed', status: 'requires_capture' }]);

    const line = worker
      .output()
      .split('\n')
      .filter((text) => text.startsWith('{'))
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((entry) => entry.msg === 'authorizing PaymentIntent (manual capture)');
    expect(line).toMatchObject({
      workflowId: started.workflowId,
      workflowRunId: started.runId,
      activityId: 'authorize-payment',
      idempotencyKey: `${started.runId}/authorize-payment`,
    });

    // A fresh worker finishes the order: the hold captured, once.
    const next = startWorkerProcess();
    try {
      const result = await started.handle.result();
      expect(result.status).toBe('completed');
      expect((await stripeObjectsFor(harness.stripe, order.orderId)).succeeded).toHaveLength(1);
      await harness.expectInvariants([order.orderId]);
    } finally {
      next.child.kill('SIGTERM');
      await once(next.child, 'exit');
    }
  }, 180_000);
});

// Proves key rotation: runs in flight under k1 finish on a worker restarted with k2 current (they
// replay their k1 payloads), everything written afterwards is under k2, and k1 stays readable; a
// worker that no longer holds k1 fails such a run's workflow task loudly, naming k1, and the run
// finishes intact once k1 is back.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { OrderInput } from '../../src/domain/order-input.js';
import { createOrderWorker } from '../../src/platform/temporal/order-worker.js';
import { dataConverterFor, failureMessage } from '../../src/platform/temporal/payload-encryption/data-converter.js';
import { METADATA } from '../../src/platform/temporal/payload-encryption/encryption-codec.js';
import { PayloadKeyRing } from '../../src/platform/temporal/payload-encryption/key-ring.js';
import type { PayloadEncryptionSettings } from '../../src/platform/temporal/payload-encryption/settings.js';
import type { orderPaymentSaga } from '../../src/workflows/index.js';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';

const k1 = randomBytes(32);
const k2 = randomBytes(32);
const ring = (keys: Record<string, Buffer>, current: string): PayloadEncryptionSettings => ({ keys: new PayloadKeyRing(keys, current), source: 'test' });
const onlyK1 = ring({ k1 }, 'k1');
const rotated = ring({ k1, k2 }, 'k2');
const k1Retired = ring({ k2 }, 'k2');

let h: SagaHarness;
let connection: NativeConnection;
beforeAll(async () => {
  h = await startSagaHarness({ encryption: onlyK1 });
  connection = await NativeConnection.connect({ address: h.temporalAddress });
});
afterAll(async () => {
  await connection.close();
  await h.close();
});

/** A worker of the harness's build and task queue with its own key ring, as a restarted worker process would be. */
async function workerWith(encryption: PayloadEncryptionSettings): Promise<{ worker: Worker; stop: () => Promise<void> }> {
  const worker = await createOrderWorker({
    connection,
    namespace: 'default',
    taskQueue: h.taskQueue,
    deps: { db: h.db.servicePool('worker'), stripe: h.stripe },
    dataConverter: dataConverterFor(encryption),
    deployment: h.deployment,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    shutdownGraceTimeMs: 5_000,
  });
  const running = worker.run();
  return {
    worker,
    stop: async () => {
      worker.shutdown();
      await running;
    },
  };
}

const clientWith = (encryption: PayloadEncryptionSettings) => new Client({ connection: h.client.connection, namespace: 'default', dataConverter: dataConverterFor(encryption) });

/** Starts orders under k1 and stops the k1 worker while their captures are still at Stripe: they are in flight. */
async function ordersInFlightUnderK1(count: number): Promise<OrderInput[]> {
  const orders: OrderInput[] = [];
  for (let index = 0; index < count; index++) orders.push(await h.newOrder());
  const before = h.emulator.counters().faults.latency;
  for (const order of orders) {
    h.emulator.addFault({ kind: 'latency', method: 'POST', path: '/v1/payment_intents/:id/capture', orderId: order.orderId, latencyMs: 1_500 });
    await h.start(order);
  }
  while (h.emulator.counters().faults.latency < before + count) await sleep(10);
  // The captures finish within the grace period; the runs' next workflow tasks wait for a worker.
  await h.stopWorker();
  return orders;
}

/** The key ID of every encrypted payload in the run's raw history, in event order. */
async function keyIdsOf(workflowId: string): Promise<string[]> {
  const { history } = await h.client.workflowService.getWorkflowExecutionHistory({ namespace: 'default', execution: { workflowId } });
  const ids: string[] = [];
  const visit = (value: unknown): void => {
    if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return;
    if (Array.isArray(value)) {
      value.forEach(visit);
      return;
    }
    const keyId = (value as Payload).metadata?.[METADATA.keyId];
    if ((value as Payload).data instanceof Uint8Array && keyId) ids.push(Buffer.from(keyId).toString('utf8'));
    else Object.values(value).forEach(visit);
  };
  visit(history?.events ?? []);
  return ids;
}

const workflowIdOf = (order: OrderInput) => `order-payment-${order.orderId}`;

describe('payload key rotation', () => {
  it('k2 made current while runs are in flight under k1: they replay and finish, later payloads are under k2, k1 stays readable', async () => {
    const orders = await ordersInFlightUnderK1(2);
    const restarted = await workerWith(rotated);
    try {
      const client = clientWith(rotated);
      for (const order of orders) {
        const result = await client.workflow.getHandle<typeof orderPaymentSaga>(workflowIdOf(order)).result();
        expect(result.status).toBe('completed');
        const keyIds = await keyIdsOf(workflowIdOf(order));
        // The input and the first steps under k1, the rest (the confirmation, the result) under k2.
        expect(keyIds[0]).toBe('k1');
        expect(keyIds.at(-1)).toBe('k2');
        expect(keyIds.indexOf('k2')).toBeGreaterThan(keyIds.lastIndexOf('k1'));
      }
      // A new order is written under k2 alone.
      const fresh = await h.newOrder();
      const started = await client.workflow.start<typeof orderPaymentSaga>('orderPaymentSaga', {
        taskQueue: h.taskQueue,
        workflowId: workflowIdOf(fresh),
        args: [fresh],
      });
      expect((await started.result()).status).toBe('completed');
      expect(new Set(await keyIdsOf(workflowIdOf(fresh)))).toEqual(new Set(['k2']));
      await h.expectInvariants([...orders, fresh].map((order) => order.orderId));
    } finally {
      await restarted.stop();
    }
  });

  it('k1 removed while a run still needs it: its workflow task fails naming k1, nothing is written, and with k1 back it finishes intact', async () => {
    await h.startWorker();
    const [order] = await ordersInFlightUnderK1(1);
    if (!order) throw new Error('no order');
    const workflowId = workflowIdOf(order);
    const eventsBefore = (await h.client.workflow.getHandle(workflowId).fetchHistory()).events?.length ?? 0;
    const withoutK1 = await workerWith(k1Retired);
    let taskFailure = '';
    try {
      await vi.waitFor(
        async () => {
          const { events } = await h.client.workflow.getHandle(workflowId).fetchHistory();
          const failed = (events ?? []).find((event) => event.workflowTaskFailedEventAttributes);
          expect(failed).toBeDefined();
          const failure = failed?.workflowTaskFailedEventAttributes?.failure;
          taskFailure = `${failure?.message ?? ''} ${(await failureMessage(clientWith(rotated).options.loadedDataConverter, failure).catch(() => '')) ?? ''}`;
        },
        { timeout: 30_000, interval: 250 },
      );
    } finally {
      await withoutK1.stop();
    }
    expect(taskFailure).toMatch(/key 'k1'/);
    const history = (await h.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    // Only workflow-task events were added: no command of the run was decided without its data.
    const workflowTaskEvent = (event: (typeof history)[number]) =>
      Boolean(event.workflowTaskScheduledEventAttributes ?? event.workflowTaskStartedEventAttributes ?? event.workflowTaskFailedEventAttributes ?? event.workflowTaskTimedOutEventAttributes);
    expect(history.slice(eventsBefore).filter((event) => !workflowTaskEvent(event))).toEqual([]);
    expect((await h.client.workflow.getHandle(workflowId).describe()).status.name).toBe('RUNNING');

    const restored = await workerWith(rotated);
    try {
      const result = await clientWith(rotated).workflow.getHandle<typeof orderPaymentSaga>(workflowId).result();
      expect(result.status).toBe('completed');
      await h.expectInvariants([order.orderId]);
    } finally {
      await restored.stop();
    }
  });
});

// Proves no history holds an order's payment data as text: every saga path (completed, declined,
// out of stock, cancelled before and after the capture, a merchant refund) runs with the codec,
// and in the raw history the server returns no payload, failure, summary or details contains the
// customer ID, the payment method or the amount. Decoded through the codec server (POST /decode,
// as the Web UI and the CLI call it), the same history has them.
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure, type Payload } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticatorFor } from '../../src/codec-server/caller-auth.js';
import { buildCodecServer } from '../../src/codec-server/server.js';
import type { OrderInput } from '../../src/domain/order-input.js';
import { encryptionCodecFor } from '../../src/platform/temporal/payload-encryption/data-converter.js';
import { ENCRYPTED_ENCODING } from '../../src/platform/temporal/payload-encryption/encryption-codec.js';
import type { merchantRefund } from '../../src/workflows/merchant-refund.js';
import { startOrdersApi, type OrdersApi } from '../support/api.js';
import { developmentEncryption } from '../support/payload-keys.js';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';

let h: SagaHarness;
let api: OrdersApi;
let apiKey: string;

beforeAll(async () => {
  h = await startSagaHarness();
  api = await startOrdersApi(h);
  apiKey = await api.keyFor('encryption-tenant');
});
afterAll(async () => {
  await api.app.close();
  await h.close();
});

/** Values no workflow would write by chance, so finding them as text means they leaked. */
const secretsOf = (order: Pick<OrderInput, 'customerId' | 'paymentMethod' | 'amount'>) => [order.customerId, order.paymentMethod, String(order.amount)];
const uniqueCustomer = () => `cust-secret-${randomUUID().slice(0, 8)}`;

type RawHistory = temporal.api.history.v1.IHistory;

async function rawHistory(workflowId: string): Promise<RawHistory> {
  const response = await h.client.workflowService.getWorkflowExecutionHistory({ namespace: 'default', execution: { workflowId } });
  return response.history ?? {};
}

const isPayload = (value: object): value is Payload => 'metadata' in value && 'data' in value && (value as Payload).data instanceof Uint8Array;
const utf8 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');

/**
 * Every text a reader of the namespace sees where data could be: each payload's metadata and
 * data (inputs, results, signals, updates, heartbeats, memo, summaries and details), and each
 * failure's message, source and stack trace. `open` turns a stored payload into what it holds.
 */
async function visibleTexts(
  history: RawHistory,
  open: (payload: Payload) => Promise<Payload> = (payload) => Promise.resolve(payload),
): Promise<{ texts: string[]; payloads: number; encrypted: number; plain: string[] }> {
  const texts: string[] = [];
  const plain: string[] = [];
  let payloads = 0;
  let encrypted = 0;
  const visit = async (value: unknown, at: string): Promise<void> => {
    if (value === null || typeof value !== 'object') return;
    if (value instanceof Uint8Array) return;
    if (Array.isArray(value)) {
      for (const item of value) await visit(item, at);
      return;
    }
    if (isPayload(value)) {
      payloads += 1;
      if (utf8(value.metadata?.encoding) === ENCRYPTED_ENCODING) encrypted += 1;
      else plain.push(`${at}: ${utf8(value.data)}`);
      const opened = await open(value);
      texts.push(utf8(opened.data), ...Object.values(opened.metadata ?? {}).map(utf8));
      return;
    }
    for (const [key, field] of Object.entries(value)) {
      if (typeof field === 'string' && ['message', 'source', 'stackTrace'].includes(key)) texts.push(field);
      else await visit(field, `${at}.${key}`);
    }
  };
  await visit(history.events ?? [], 'events');
  return { texts, payloads, encrypted, plain };
}

const TOKEN = randomBytes(24).toString('hex');
let codecServer: FastifyInstance;
beforeAll(async () => {
  codecServer = await buildCodecServer({
    codec: encryptionCodecFor(developmentEncryption()),
    authenticate: authenticatorFor({ kind: 'static-token', token: TOKEN }),
    corsOrigins: [],
    bodyLimitBytes: 4 * 1024 * 1024,
    logger: pino({ level: 'silent' }),
  });
});
afterAll(async () => {
  await codecServer.close();
});

/** One payload through the codec server's POST /decode. */
async function decrypt(payload: Payload): Promise<Payload> {
  const b64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('base64');
  const response = await codecServer.inject({
    method: 'POST',
    url: '/decode',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'x-namespace': 'default' },
    payload: JSON.stringify({ payloads: [{ metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, b64(value)])), data: b64(payload.data) }] }),
  });
  expect(response.statusCode).toBe(200);
  const [decoded] = (JSON.parse(response.body) as { payloads: { metadata: Record<string, string>; data: string }[] }).payloads;
  return {
    metadata: Object.fromEntries(Object.entries(decoded?.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')])),
    data: Buffer.from(decoded?.data ?? '', 'base64'),
  };
}

/** The raw history hides the secrets; decoded by the codec server, it holds each of them. */
async function expectEncrypted(workflowId: string, secrets: string[]): Promise<void> {
  const history = await rawHistory(workflowId);
  const stored = await visibleTexts(history);
  expect(stored.payloads).toBeGreaterThan(5);
  // Every payload the workers and clients wrote is encrypted, but for what Temporal never passes
  // through a codec and which must hold nothing sensitive: the search attributes (the order ID and
  // its status only), the trace context header, and a local activity marker's bookkeeping (the
  // SDK's own: sequence number, attempt, activity type and times; its result is encrypted); and
  // what the server writes itself.
  const unexpected = stored.plain.filter(
    (line) =>
      !/^events\.\w+\.searchAttributes\.indexedFields\.(OrderId|OrderStatus): "[\w-]+"$/.test(line) &&
      !/^events\.markerRecordedEventAttributes\.details\.data\.payloads: \{"seq":\d+,"attempt":\d+,"activity_id":"\d+","activity_type":"\w+","complete_time":\{[^{}]*\},"backoff":(null|\{[^{}]*\}),"original_schedule_time":\{[^{}]*\}\}$/.test(line) &&
      !/^events\.\w+\.header\.fields\._tracer-data: \{"traceparent":"[\w-]+"\}$/.test(line) &&
      !/: "ACTIVITY_ID_NOT_STARTED"$/.test(line),
  );
  expect(unexpected).toEqual([]);
  const leaks = secrets.filter((secret) => stored.texts.some((text) => text.includes(secret)));
  expect(leaks, `found as text in the raw history of ${workflowId}`).toEqual([]);
  expect(stored.texts.join('\n')).not.toContain('Stripe');
  const opened = (await visibleTexts(history, decrypt)).texts.join('\n');
  for (const secret of secrets) expect(opened, `${secret} in the decrypted history`).toContain(secret);
}

async function cancelWhileStripeWorks(order: OrderInput, stripePath: string): Promise<void> {
  const before = h.emulator.counters().faults.latency;
  h.emulator.addFault({ kind: 'latency', method: 'POST', path: stripePath, orderId: order.orderId, latencyMs: 1500 });
  const { handle } = await h.start(order);
  while (h.emulator.counters().faults.latency === before) await sleep(10);
  await handle.cancel();
  const ending = await handle.result().catch((error: unknown) => error);
  expect(ending).toBeInstanceOf(WorkflowFailedError);
  expect((ending as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
}

describe('payment data is encrypted in every history', () => {
  it('completed: the input, each activity and the result', async () => {
    const order = await h.newOrder({ customerId: uniqueCustomer(), amount: 48_193 });
    const { handle, workflowId } = await h.start(order);
    expect((await handle.result()).status).toBe('completed');
    await expectEncrypted(workflowId, secretsOf(order));
  });

  it("declined: the decline's failure message and stack trace too", async () => {
    const order = await h.newOrder({ customerId: uniqueCustomer(), amount: 48_277, paymentMethod: 'pm_card_visa_chargeDeclinedInsufficientFunds' });
    const { handle, workflowId } = await h.start(order);
    expect((await handle.result()).status).toBe('declined');
    await expectEncrypted(workflowId, [...secretsOf(order), 'insufficient']);
  });

  it('out of stock: the reservation failure and the compensation', async () => {
    const order = await h.newOrder({ customerId: uniqueCustomer(), amount: 48_311, quantity: 11 });
    const { handle, workflowId } = await h.start(order);
    expect((await handle.result()).status).toBe('compensated');
    await expectEncrypted(workflowId, secretsOf(order));
  });

  it('cancelled while the hold is placed: the void, and the cancellation', async () => {
    const order = await h.newOrder({ customerId: uniqueCustomer(), amount: 48_359 });
    await cancelWhileStripeWorks(order, '/v1/payment_intents');
    await expectEncrypted(`order-payment-${order.orderId}`, secretsOf(order));
  });

  it('cancelled while the capture runs: the refund of the capture', async () => {
    const order = await h.newOrder({ customerId: uniqueCustomer(), amount: 48_413 });
    await cancelWhileStripeWorks(order, '/v1/payment_intents/:id/capture');
    await expectEncrypted(`order-payment-${order.orderId}`, secretsOf(order));
  });

  it("a merchant refund through the API: the order's run and the refund's run, whose summary names the order only", async () => {
    const customerId = uniqueCustomer();
    const created = await api.post({ apiKey, idempotencyKey: randomUUID(), body: await api.orderBody({ customerId, amount: 48_527 }) });
    const orderId = created.body.id as string;
    expect((await h.client.workflow.getHandle(`order-payment-${orderId}`).result()) as { status: string }).toMatchObject({ status: 'completed' });
    const response = await api.app.inject({
      method: 'POST',
      url: `/v1/orders/${orderId}/refunds`,
      headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
      payload: JSON.stringify({ amount: 17_389 }),
    });
    expect(response.statusCode).toBe(201);
    const refundWorkflowId = (JSON.parse(response.body) as { workflowId: string }).workflowId;
    await h.client.workflow.getHandle<typeof merchantRefund>(refundWorkflowId).result();
    await expectEncrypted(`order-payment-${orderId}`, [customerId, 'pm_card_visa', '48527']);
    await expectEncrypted(refundWorkflowId, ['17389']);
    const summary = await (await h.client.workflow.getHandle(refundWorkflowId).describe()).staticSummary();
    expect(summary).toMatch(new RegExp(`^Merchant refund \\S+ of order ${orderId}$`));
  });
});

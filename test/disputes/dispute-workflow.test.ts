// Disputes worked to the end (issue 35; failure-matrix row 22): an order paid with a dispute test
// card is disputed after its capture; Stripe's webhooks (duplicated, out of order) start and wake
// one dispute workflow per dispute, which books the withdrawal, the fee and a won dispute's
// reinstatement once, announces the dispute through the outbox, takes the merchant's evidence and
// acceptance through the API, and acts at the evidence deadline. Real Temporal, PostgreSQL, the
// emulator and the official SDK.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { orderPaymentSaga } from '../../src/workflows/index.js';
import { disputeWorkflowId } from '../../src/workflows/dispute-messages.js';
import type { DisputeSettings } from '../../src/platform/config/settings.js';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';
import { startOrdersApi, type ApiResponse, type OrdersApi } from '../support/api.js';
import { startApi, WEBHOOK_SECRET, type RunningApi } from '../support/webhooks.js';
import { outboxEvents } from '../support/order-state.js';

const WEEK_MS = 7 * 24 * 60 * 60 * 1000;
const settings: DisputeSettings = { deadlinePolicy: 'accept', reminderLeadMs: 48 * 3600_000, policyLeadMs: 2 * 3600_000, resyncMs: 6 * 3600_000 };

let h: SagaHarness;
let orders: OrdersApi;
let webhooks: RunningApi;
let tenant: string;

beforeAll(async () => {
  h = await startSagaHarness();
  orders = await startOrdersApi(h);
  tenant = await orders.keyFor('dispute-tenant');
  webhooks = await startApi({ db: h.db.pool, client: h.client, disputes: { taskQueue: h.taskQueue, settings }, handoff: { attempts: 5, retryMs: 50 } });
  h.emulator.addWebhookEndpoint({ url: webhooks.webhookUrl, secret: WEBHOOK_SECRET });
  h.emulator.configureWebhookDelivery({ retryInitialMs: 50 });
});
afterAll(async () => {
  await webhooks.close();
  await orders.app.close();
  await h.close();
});

/** A completed order paid with `paymentMethod`, through the API: Stripe disputes it once captured. */
async function disputedOrder(paymentMethod = 'pm_card_createDispute', amount = 4200): Promise<string> {
  const created = await orders.post({ apiKey: tenant, idempotencyKey: `idem-${randomUUID()}`, body: await orders.orderBody({ paymentMethod, amount }) });
  const orderId = created.body.id as string;
  await h.client.workflow.getHandle<typeof orderPaymentSaga>(`order-payment-${orderId}`).result();
  return orderId;
}

async function disputeOf(orderId: string, where: (dispute: Record<string, unknown>) => boolean = () => true): Promise<Record<string, unknown>> {
  return vi.waitFor(
    async () => {
      const view = await orders.get(tenant, `/v1/orders/${orderId}`);
      const dispute = (view.body.disputes as Record<string, unknown>[] | undefined)?.[0];
      if (!dispute || !where(dispute)) throw new Error(`order ${orderId}'s dispute is ${JSON.stringify(dispute)}`);
      return dispute;
    },
    { timeout: 30_000, interval: 200 },
  );
}

async function disputeLedger(orderId: string) {
  const { rows } = await h.db.pool.query<{ kind: string; amount_minor: number; stripe_object_id: string }>(
    "select kind, amount_minor, stripe_object_id from ledger_transactions where order_id = $1 and kind like 'dispute_%' order by id",
    [orderId],
  );
  return rows;
}

async function disputeEvents(orderId: string) {
  return (await outboxEvents(h.db.pool, orderId)).filter((row) => row.event_type.startsWith('order.dispute'));
}

async function post(path: string, body: unknown, key = `idem-${randomUUID()}`): Promise<ApiResponse> {
  const response = await orders.app.inject({
    method: 'POST',
    url: path,
    headers: { authorization: `Bearer ${tenant}`, 'idempotency-key': key, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  return { status: response.statusCode, headers: response.headers, body: JSON.parse(response.body) as Record<string, unknown> };
}

describe('a dispute, worked to the end', () => {
  it('won with evidence: withdrawal and fee booked, evidence submitted once under its key, the reinstatement booked, announced opened and closed once each', async () => {
    const orderId = await disputedOrder();
    const open = await disputeOf(orderId, (dispute) => dispute.status === 'needs_response');
    const disputeId = open.id as string;
    expect(open).toMatchObject({ amount: 4200, currency: 'usd', isInquiry: false, outcome: null, evidenceSubmitted: false });
    expect(Date.parse(open.evidenceDueBy as string)).toBeGreaterThan(Date.now() + WEEK_MS - 3600_000);
    await vi.waitFor(
      async () => {
        expect((await disputeLedger(orderId)).map((row) => row.kind)).toEqual(['dispute_withdrawal', 'dispute_fee']);
      },
      { timeout: 20_000 },
    );
    expect((await disputeLedger(orderId)).map((row) => row.amount_minor)).toEqual([4200, 1500]);

    const path = `/v1/orders/${orderId}/disputes/${disputeId}/evidence`;
    const key = `idem-${randomUUID()}`;
    const body = { evidence: { uncategorized_text: 'winning_evidence', product_description: 'A widget, shipped and delivered' }, submit: true };
    const answered = await post(path, body, key);
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const replay = await post(path, body, key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(answered.body);
    // One evidence write at Stripe, under the workflow's key for the first submission.
    const writes = h.stripeRequests().filter((line) => line.method === 'POST' && line.path === `/v1/disputes/${disputeId}` && !line.replayed);
    expect(writes).toHaveLength(1);
    expect(writes[0]?.idempotencyKey).toMatch(/\/submit-dispute-evidence-1$/);

    const won = await disputeOf(orderId, (dispute) => dispute.outcome === 'won');
    expect(won).toMatchObject({ status: 'won', evidenceSubmitted: true });
    expect(await h.client.workflow.getHandle(disputeWorkflowId(disputeId)).result()).toMatchObject({ closed: true, outcome: 'won' });
    expect((await disputeLedger(orderId)).map((row) => [row.kind, row.amount_minor])).toEqual([
      ['dispute_withdrawal', 4200],
      ['dispute_fee', 1500],
      ['dispute_reinstatement', 4200],
    ]);
    const events = await disputeEvents(orderId);
    expect(events.map((row) => [row.event_type, row.event_key, row.payload.reason])).toEqual([
      ['order.disputed', disputeId, 'fraudulent'],
      ['order.dispute_closed', disputeId, 'won'],
    ]);
    expect(events[0]?.payload).toMatchObject({ dispute_id: disputeId, amount_minor: 4200 });
    // Opened while the saga confirms, or after: the order's status as the opening transaction saw it.
    expect(['paid', 'completed']).toContain(events[0]?.payload.status);
    await h.expectInvariants([orderId]);

    // Closed: more evidence is refused and sends nothing.
    const late = await post(path, { evidence: { uncategorized_text: 'more' } });
    expect(late.status).toBe(409);
    expect(h.stripeRequests().filter((line) => line.method === 'POST' && line.path === `/v1/disputes/${disputeId}` && !line.replayed)).toHaveLength(1);
  });

  it('every dispute webhook twice and `created` last: one dispute, one withdrawal and fee, lost with evidence, each event announced once', async () => {
    h.emulator.addFault({ kind: 'webhook_duplicate', eventType: 'charge.dispute.*', copies: 2 });
    h.emulator.addFault({ kind: 'webhook_reorder', eventType: 'charge.dispute.created', holdMs: 2_000 });
    const disputed = await disputedOrder('pm_card_createDisputeProductNotReceived', 2500);
    const open = await disputeOf(disputed, (dispute) => dispute.status === 'needs_response');
    const disputeId = open.id as string;
    expect(open.reason).toBe('product_not_received');
    const lost = await post(`/v1/orders/${disputed}/disputes/${disputeId}/evidence`, { evidence: { uncategorized_text: 'losing_evidence' }, submit: true });
    expect(lost.status).toBe(200);
    await disputeOf(disputed, (dispute) => dispute.outcome === 'lost');
    // Let the held and duplicated deliveries land after the close.
    await vi.waitFor(async () => {
      const { rows } = await h.db.pool.query<{ n: number }>(
        "select count(*)::int as n from stripe_webhook_events where event_type like 'charge.dispute.%' and object_id = $1",
        [disputeId],
      );
      expect(rows[0]?.n).toBeGreaterThanOrEqual(4);
    }, { timeout: 20_000 });
    h.emulator.clearFaults();
    expect((await disputeLedger(disputed)).map((row) => [row.kind, row.amount_minor])).toEqual([
      ['dispute_withdrawal', 2500],
      ['dispute_fee', 1500],
    ]);
    expect((await disputeEvents(disputed)).map((row) => [row.event_type, row.payload.reason])).toEqual([
      ['order.disputed', 'product_not_received'],
      ['order.dispute_closed', 'lost'],
    ]);
    const { rows } = await h.db.pool.query<{ n: number }>('select count(*)::int as n from disputes where order_id = $1', [disputed]);
    expect(rows[0]?.n).toBe(1);
    await h.expectInvariants([disputed]);
  });

  it('accepted by the merchant: closed lost, recorded as accepted; a refund of the disputed charge fails with its reason', async () => {
    const orderId = await disputedOrder();
    const disputeId = (await disputeOf(orderId, (dispute) => dispute.status === 'needs_response')).id as string;
    const accepted = await post(`/v1/orders/${orderId}/disputes/${disputeId}/accept`, {});
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    await disputeOf(orderId, (dispute) => dispute.outcome === 'accepted');
    const refund = await post(`/v1/orders/${orderId}/refunds`, { amount: 100 });
    expect(refund.status).toBe(201);
    await h.client.workflow.getHandle(refund.body.workflowId as string).result().catch(() => undefined);
    const read = await orders.get(tenant, `/v1/refunds/${refund.body.id as string}`);
    expect(read.body).toMatchObject({ status: 'failed' });
    expect(String(read.body.failureReason)).toMatch(/charged back|charge_disputed/);
    await h.expectInvariants([orderId]);
  });

  it('the deadline with no evidence: the reminder is announced, then the accept policy closes it, recorded as accepted at the deadline', async () => {
    // Stripe's due_by is a week out: the leads put the reminder 2 s and the policy 5 s from now.
    Object.assign(settings, { reminderLeadMs: WEEK_MS - 2_000, policyLeadMs: WEEK_MS - 5_000, deadlinePolicy: 'accept' });
    try {
      const orderId = await disputedOrder();
      const disputeId = (await disputeOf(orderId)).id as string;
      await disputeOf(orderId, (dispute) => dispute.outcome === 'accepted_at_deadline');
      expect((await disputeEvents(orderId)).map((row) => [row.event_type, row.event_key])).toEqual([
        ['order.disputed', disputeId],
        ['order.dispute_evidence_due', disputeId],
        ['order.dispute_closed', disputeId],
      ]);
      const history = await h.client.workflow.getHandle(disputeWorkflowId(disputeId)).fetchHistory();
      expect((history.events ?? []).filter((event) => event.timerStartedEventAttributes).length).toBeGreaterThanOrEqual(2);
      await h.expectInvariants([orderId]);
    } finally {
      Object.assign(settings, { reminderLeadMs: 48 * 3600_000, policyLeadMs: 2 * 3600_000 });
    }
  });
});

describe('an early fraud warning, acted on before any dispute', () => {
  it('on a partly refunded order, delivered late and twice: refunds what is left once, under the warning’s refund request, announced once', async () => {
    h.emulator.addFault({ kind: 'webhook_delay', eventType: 'radar.early_fraud_warning.created', delayMs: 3_000 });
    h.emulator.addFault({ kind: 'webhook_duplicate', eventType: 'radar.early_fraud_warning.created', copies: 2 });
    try {
      const orderId = await disputedOrder('pm_card_createEarlyFraudWarning');
      // The merchant refunds part of it before the warning's webhook arrives.
      const partial = await post(`/v1/orders/${orderId}/refunds`, { amount: 1000 });
      expect(partial.status).toBe(201);
      await h.client.workflow.getHandle(partial.body.workflowId as string).result();

      const view = await vi.waitFor(
        async () => {
          const read = await orders.get(tenant, `/v1/orders/${orderId}`);
          const requests = read.body.refundRequests as { id: string; status: string; amount: number }[];
          const warning = requests.find((request) => request.id.startsWith('rfd_efw_'));
          if (warning?.status !== 'succeeded') throw new Error(`no succeeded warning refund yet: ${JSON.stringify(requests)}`);
          return read.body;
        },
        { timeout: 30_000, interval: 250 },
      );
      expect(view.amountRefunded).toBe(4200);
      const requests = view.refundRequests as { id: string; status: string; amount: number }[];
      expect(requests.map((request) => [request.status, request.amount])).toEqual([
        ['succeeded', 1000],
        ['succeeded', 3200],
      ]);
      const paymentIntentId = (view.stripe as { paymentIntentId: string }).paymentIntentId;
      expect((await h.stripe.refunds.list({ payment_intent: paymentIntentId })).data).toHaveLength(2);
      const warnings = await h.stripe.radar.earlyFraudWarnings.list({ payment_intent: paymentIntentId });
      const warningId = warnings.data[0]?.id as string;
      expect(warnings.data[0]?.actionable).toBe(false);
      await vi.waitFor(
        async () => {
          const events = (await outboxEvents(h.db.pool, orderId)).filter((row) => row.event_type === 'order.fraud_warning_refunded');
          expect(events.map((row) => [row.event_key, row.payload.amount_minor])).toEqual([[warningId, 3200]]);
        },
        { timeout: 10_000 },
      );
      // The duplicate delivery found the run (or its end) and refunded nothing more.
      const { rows } = await h.db.pool.query<{ n: number }>(
        "select count(*)::int as n from stripe_webhook_events where event_type = 'radar.early_fraud_warning.created' and object_id = $1",
        [warningId],
      );
      expect(rows[0]?.n).toBe(1);
      expect(await h.client.workflow.getHandle(`order-fraud-warning-${warningId}`).result()).toMatchObject({ action: 'refunded', amount: 3200 });
      await h.expectInvariants([orderId]);
    } finally {
      h.emulator.clearFaults();
    }
  });
});


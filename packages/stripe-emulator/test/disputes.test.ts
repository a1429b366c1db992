// Disputes through the official SDK: opened after capture by the dispute test cards, the money they move, evidence and
// submission, the decision (test evidence, close, the control API, the clock), refunds refused, idempotency, webhooks.
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DISPUTE_RESPONSE_WINDOW_SECONDS } from '../src/index.js';
import { chargeParams, control, raw, rejection, useEmulator } from './helpers.js';
import { Receiver } from './webhook-receiver.js';

const test = useEmulator({ webhookDelivery: { retryInitialMs: 20, retryMaxMs: 100, maxAttempts: 4 } });
let receiver: Receiver;
let secret: string;

beforeAll(async () => {
  receiver = await Receiver.start();
});
afterAll(async () => {
  await receiver.close();
});
// After useEmulator's reset, which registered its beforeEach first.
beforeEach(() => {
  receiver.received.length = 0;
  secret = test.emulator.addWebhookEndpoint({ url: receiver.url });
});
afterEach(async () => {
  await test.emulator.webhooksIdle();
});

const AMOUNT = 5_000;

/** A captured payment with a dispute test card, and the dispute it drew. */
async function disputed(
  orderId: string,
  paymentMethod = 'pm_card_createDispute',
): Promise<{ intent: Stripe.PaymentIntent; dispute: Stripe.Dispute }> {
  const intent = await test.stripe.paymentIntents.create(chargeParams(orderId, { amount: AMOUNT, payment_method: paymentMethod }));
  const disputes = await test.stripe.disputes.list({ payment_intent: intent.id });
  expect(disputes.data).toHaveLength(1);
  const [dispute] = disputes.data;
  if (!dispute) throw new Error('no dispute');
  return { intent, dispute };
}

/**
 * The events of one dispute the webhook endpoint received, each verified with the SDK, in the order
 * the emulator recorded them (deliveries run concurrently, so arrival order is not theirs).
 */
async function deliveredFor(disputeId: string): Promise<Stripe.Event[]> {
  await test.emulator.webhooksIdle();
  const recorded = test.emulator.events().map((event) => event.id).reverse();
  return receiver.received
    .filter((entry) => entry.event.data.object.id === disputeId)
    .sort((a, b) => recorded.indexOf(a.event.id) - recorded.indexOf(b.event.id))
    .map((entry) => test.stripe.webhooks.constructEvent(entry.body, entry.signature ?? '', secret));
}

function nowSeconds(): number {
  return Math.floor(test.emulator.now() / 1000);
}

describe('a dispute opens after capture', () => {
  it('pm_card_createDispute: needs_response, due in the future, the amount and the 1500 fee withdrawn', async () => {
    const { intent, dispute } = await disputed('order-d1');
    expect(intent.status).toBe('succeeded');
    expect(dispute).toMatchObject({
      object: 'dispute',
      amount: AMOUNT,
      currency: 'usd',
      charge: intent.latest_charge,
      payment_intent: intent.id,
      reason: 'fraudulent',
      status: 'needs_response',
      is_charge_refundable: false,
      livemode: false,
      metadata: {},
      evidence: { uncategorized_text: null, product_description: null },
      evidence_details: { has_evidence: false, past_due: false, submission_count: 0 },
    });
    expect(dispute.id).toMatch(/^dp_/);
    expect(dispute.evidence_details.due_by).toBeGreaterThan(nowSeconds());
    expect(dispute.evidence_details.due_by).toBe(dispute.created + DISPUTE_RESPONSE_WINDOW_SECONDS);
    expect(dispute.balance_transactions).toHaveLength(1);
    expect(dispute.balance_transactions[0]).toMatchObject({
      object: 'balance_transaction',
      amount: -AMOUNT,
      fee: 1_500,
      net: -AMOUNT - 1_500,
      currency: 'usd',
      reporting_category: 'dispute',
      type: 'adjustment',
      source: dispute.id,
    });
    expect(dispute.balance_transactions[0]?.id).toMatch(/^txn_/);

    expect(await test.stripe.disputes.retrieve(dispute.id)).toMatchObject({ id: dispute.id, status: 'needs_response' });
    expect((await test.stripe.disputes.list({ charge: dispute.charge as string })).data.map((item) => item.id)).toEqual([dispute.id]);
    expect((await test.stripe.charges.retrieve(dispute.charge as string)).disputed).toBe(true);
  });

  it('pm_card_createDisputeProductNotReceived gives reason product_not_received; other cards open none', async () => {
    const { dispute } = await disputed('order-d2', 'pm_card_createDisputeProductNotReceived');
    expect(dispute).toMatchObject({ reason: 'product_not_received', status: 'needs_response' });
    await test.stripe.paymentIntents.create(chargeParams('order-d2-visa'));
    expect((await test.stripe.disputes.list()).data.map((item) => item.id)).toEqual([dispute.id]);
  });

  it('under manual capture the dispute waits for the capture', async () => {
    const intent = await test.stripe.paymentIntents.create(
      chargeParams('order-d3', { amount: AMOUNT, payment_method: 'pm_card_createDispute', capture_method: 'manual' }),
    );
    expect(intent.status).toBe('requires_capture');
    expect((await test.stripe.disputes.list({ payment_intent: intent.id })).data).toEqual([]);
    await test.stripe.paymentIntents.capture(intent.id, { amount_to_capture: 4_000 });
    const [dispute] = (await test.stripe.disputes.list({ payment_intent: intent.id })).data;
    expect(dispute).toMatchObject({ amount: 4_000, status: 'needs_response' });
    expect(dispute?.balance_transactions[0]).toMatchObject({ amount: -4_000, net: -5_500 });
  });

  it('sends charge.dispute.created and charge.dispute.funds_withdrawn (with the withdrawal), signed, after the payment', async () => {
    const { intent, dispute } = await disputed('order-d4');
    const events = await deliveredFor(dispute.id);
    expect(events.map((event) => event.type)).toEqual(['charge.dispute.created', 'charge.dispute.funds_withdrawn']);
    const withdrawn = events[1]?.data.object as Stripe.Dispute;
    expect(withdrawn.balance_transactions.map((txn) => [txn.amount, txn.fee, txn.net])).toEqual([[-AMOUNT, 1_500, -AMOUNT - 1_500]]);
    // Raised by Stripe on its own, after the payment's own events.
    expect(events[0]?.request).toEqual({ id: null, idempotency_key: null });
    const order = test.emulator.events().map((event) => [event.type, event.data.object.id]).reverse();
    expect(order).toEqual([
      ['payment_intent.created', intent.id],
      ['charge.succeeded', intent.latest_charge],
      ['payment_intent.succeeded', intent.id],
      ['charge.dispute.created', dispute.id],
      ['charge.dispute.funds_withdrawn', dispute.id],
    ]);
  });
});

describe('evidence and the decision', () => {
  it('winning_evidence: saved, submitted, won at once, the amount reinstated; all five webhooks delivered and signed', async () => {
    const { dispute } = await disputed('order-d5');
    const saved = await test.stripe.disputes.update(dispute.id, {
      evidence: { product_description: 'A blue teapot', customer_email_address: 'buyer@example.com' },
      metadata: { order_id: 'order-d5' },
    });
    expect(saved).toMatchObject({
      status: 'needs_response',
      evidence: { product_description: 'A blue teapot', customer_email_address: 'buyer@example.com', uncategorized_text: null },
      evidence_details: { has_evidence: true, submission_count: 0 },
      metadata: { order_id: 'order-d5' },
    });

    const won = await test.stripe.disputes.update(dispute.id, { evidence: { uncategorized_text: 'winning_evidence' }, submit: true });
    expect(won).toMatchObject({
      status: 'won',
      evidence: { product_description: 'A blue teapot', uncategorized_text: 'winning_evidence' },
      evidence_details: { has_evidence: true, submission_count: 1, past_due: false },
    });
    expect(won.balance_transactions.map((txn) => [txn.amount, txn.fee, txn.net, txn.reporting_category, txn.type])).toEqual([
      [-AMOUNT, 1_500, -AMOUNT - 1_500, 'dispute', 'adjustment'],
      [AMOUNT, 0, AMOUNT, 'dispute_reversal', 'adjustment'],
    ]);
    expect((await test.stripe.disputes.retrieve(dispute.id)).status).toBe('won');

    const events = await deliveredFor(dispute.id);
    expect(events.map((event) => event.type)).toEqual([
      'charge.dispute.created',
      'charge.dispute.funds_withdrawn',
      'charge.dispute.updated',
      'charge.dispute.updated',
      'charge.dispute.closed',
      'charge.dispute.funds_reinstated',
    ]);
    const [firstUpdate, submitted] = events.filter((event) => event.type === 'charge.dispute.updated');
    expect(firstUpdate?.data.previous_attributes).toMatchObject({
      evidence: { product_description: null, customer_email_address: null },
      evidence_details: { has_evidence: false },
      metadata: {},
    });
    expect(submitted?.data.object).toMatchObject({ status: 'under_review', evidence_details: { submission_count: 1 } });
    expect(submitted?.data.previous_attributes).toMatchObject({ status: 'needs_response', evidence: { uncategorized_text: null } });
    expect(events[4]?.data.object).toMatchObject({ status: 'won' });
    expect((events[5]?.data.object as Stripe.Dispute).balance_transactions).toHaveLength(2);
    expect(events[2]?.request?.id).toMatch(/^req_/);
  });

  it('losing_evidence: lost at once, nothing reinstated', async () => {
    const { dispute } = await disputed('order-d6');
    const lost = await test.stripe.disputes.update(dispute.id, { evidence: { uncategorized_text: 'losing_evidence' }, submit: true });
    expect(lost.status).toBe('lost');
    expect(lost.balance_transactions.map((txn) => txn.amount)).toEqual([-AMOUNT]);
    const types = (await deliveredFor(dispute.id)).map((event) => event.type);
    expect(types).toContain('charge.dispute.closed');
    expect(types).not.toContain('charge.dispute.funds_reinstated');
  });

  it('close accepts the dispute: lost; closing again, or updating its evidence, is a 400', async () => {
    const { dispute } = await disputed('order-d7');
    const closed = await test.stripe.disputes.close(dispute.id);
    expect(closed).toMatchObject({ id: dispute.id, status: 'lost' });
    expect(closed.balance_transactions).toHaveLength(1);

    const again = await rejection(test.stripe.disputes.close(dispute.id));
    expect(again).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(again).toMatchObject({ statusCode: 400, rawType: 'invalid_request_error' });
    const evidence = await rejection(test.stripe.disputes.update(dispute.id, { evidence: { uncategorized_text: 'too late' } }));
    expect(evidence).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(evidence).toMatchObject({ statusCode: 400, rawType: 'invalid_request_error' });
    const submit = await rejection(test.stripe.disputes.update(dispute.id, { submit: true }));
    expect(submit).toMatchObject({ statusCode: 400, rawType: 'invalid_request_error' });
    // Metadata is not evidence: it can still change.
    expect((await test.stripe.disputes.update(dispute.id, { metadata: { note: 'accepted' } })).metadata).toEqual({ note: 'accepted' });

    const types = (await deliveredFor(dispute.id)).map((event) => event.type);
    expect(types.filter((type) => type === 'charge.dispute.closed')).toHaveLength(1);
  });

  it('other evidence waits under review for the decide control', async () => {
    const { dispute } = await disputed('order-d8');
    const submitted = await test.stripe.disputes.update(dispute.id, { evidence: { uncategorized_text: 'Signed delivery slip' }, submit: true });
    expect(submitted.status).toBe('under_review');
    const locked = await rejection(test.stripe.disputes.update(dispute.id, { evidence: { product_description: 'more' } }));
    expect(locked).toMatchObject({ statusCode: 400, rawType: 'invalid_request_error' });

    expect((await control(test.emulator, 'POST', '/disputes/dp_nope/decide', { outcome: 'won' })).status).toBe(404);
    expect((await control(test.emulator, 'POST', `/disputes/${dispute.id}/decide`, { outcome: 'maybe' })).status).toBe(400);
    const decided = await control(test.emulator, 'POST', `/disputes/${dispute.id}/decide`, { outcome: 'won' });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ decided: true, dispute: { id: dispute.id, status: 'won' } });
    expect((await control(test.emulator, 'POST', `/disputes/${dispute.id}/decide`, { outcome: 'lost' })).status).toBe(409);

    const after = await test.stripe.disputes.retrieve(dispute.id);
    expect(after.status).toBe('won');
    expect(after.balance_transactions.map((txn) => txn.amount)).toEqual([-AMOUNT, AMOUNT]);
    const types = (await deliveredFor(dispute.id)).map((event) => event.type);
    expect(types.slice(-2)).toEqual(['charge.dispute.closed', 'charge.dispute.funds_reinstated']);

    // The handle decides too.
    const { dispute: other } = await disputed('order-d8b');
    expect(test.emulator.decideDispute(other.id, 'lost')).toBe(true);
    expect(test.emulator.decideDispute(other.id, 'won')).toBe(false);
    expect((await test.stripe.disputes.retrieve(other.id)).status).toBe('lost');
  });

  it('past due_by on the emulator clock: a dispute waiting for a response closes lost, past_due; one under review stays', async () => {
    const { dispute } = await disputed('order-d9');
    const { dispute: reviewed } = await disputed('order-d9b');
    await test.stripe.disputes.update(reviewed.id, { evidence: { uncategorized_text: 'Tracking number 123' }, submit: true });

    expect((await control(test.emulator, 'POST', '/clock/advance', { seconds: DISPUTE_RESPONSE_WINDOW_SECONDS - 60 })).status).toBe(200);
    expect((await test.stripe.disputes.retrieve(dispute.id)).status).toBe('needs_response');
    expect((await control(test.emulator, 'POST', '/clock/advance', { seconds: 120 })).status).toBe(200);

    const closed = test.emulator.events({ type: 'charge.dispute.closed' });
    expect(closed.map((event) => event.data.object)).toMatchObject([
      { id: dispute.id, status: 'lost', evidence_details: { past_due: true } },
    ]);
    // Closed at the deadline it missed, by Stripe, not by a request.
    expect(closed[0]).toMatchObject({ created: dispute.evidence_details.due_by, request: { id: null } });
    expect(await test.stripe.disputes.retrieve(dispute.id)).toMatchObject({ status: 'lost', evidence_details: { past_due: true } });
    expect((await test.stripe.disputes.retrieve(reviewed.id)).status).toBe('under_review');
    expect((await deliveredFor(dispute.id)).map((event) => event.type)).toContain('charge.dispute.closed');
  });

  it('the clock control takes ms or seconds, not both', async () => {
    expect((await control(test.emulator, 'POST', '/clock/advance', { ms: 1, seconds: 1 })).status).toBe(400);
    const before = test.emulator.now();
    await control(test.emulator, 'POST', '/clock/advance', { seconds: 10 });
    expect(test.emulator.now()).toBeGreaterThanOrEqual(before + 10_000);
  });
});

describe('inquiries', () => {
  it('pm_card_createDisputeInquiry: warning_needs_response, refundable, no withdrawal; close gives warning_closed', async () => {
    const { intent, dispute } = await disputed('order-d10', 'pm_card_createDisputeInquiry');
    expect(dispute).toMatchObject({ status: 'warning_needs_response', is_charge_refundable: true, balance_transactions: [], amount: AMOUNT });
    expect((await deliveredFor(dispute.id)).map((event) => event.type)).toEqual(['charge.dispute.created']);

    const closed = await test.stripe.disputes.close(dispute.id);
    expect(closed).toMatchObject({ status: 'warning_closed', balance_transactions: [] });
    expect((await deliveredFor(dispute.id)).map((event) => event.type)).toEqual(['charge.dispute.created', 'charge.dispute.closed']);
    // An inquiry took no money: the charge can be refunded.
    expect((await test.stripe.refunds.create({ payment_intent: intent.id })).status).toBe('succeeded');
  });

  it('an inquiry past due closes warning_closed; a won inquiry reinstates nothing', async () => {
    const { dispute } = await disputed('order-d11', 'pm_card_createDisputeInquiry');
    const { dispute: answered } = await disputed('order-d11b', 'pm_card_createDisputeInquiry');
    const submitted = await test.stripe.disputes.update(answered.id, { evidence: { uncategorized_text: 'Order history' }, submit: true });
    expect(submitted.status).toBe('warning_under_review');

    test.emulator.advanceClock((DISPUTE_RESPONSE_WINDOW_SECONDS + 1) * 1000);
    expect(await test.stripe.disputes.retrieve(dispute.id)).toMatchObject({ status: 'warning_closed', evidence_details: { past_due: true } });

    expect(test.emulator.decideDispute(answered.id, 'won')).toBe(true);
    expect(await test.stripe.disputes.retrieve(answered.id)).toMatchObject({ status: 'won', balance_transactions: [] });
    expect((await deliveredFor(answered.id)).map((event) => event.type)).not.toContain('charge.dispute.funds_reinstated');
  });
});

describe('refunds of a disputed charge', () => {
  it('are refused with charge_disputed while the dispute is open and once it is lost, allowed once it is won', async () => {
    const { intent, dispute } = await disputed('order-d12');
    for (const params of [{ payment_intent: intent.id }, { charge: dispute.charge as string }]) {
      const error = await rejection(test.stripe.refunds.create(params));
      expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(error).toMatchObject({ statusCode: 400, rawType: 'invalid_request_error', code: 'charge_disputed' });
    }
    expect((await test.stripe.refunds.list({ payment_intent: intent.id })).data).toEqual([]);

    await test.stripe.disputes.update(dispute.id, { submit: true });
    expect(await rejection(test.stripe.refunds.create({ payment_intent: intent.id }))).toMatchObject({ code: 'charge_disputed' });
    test.emulator.decideDispute(dispute.id, 'won');
    expect((await test.stripe.refunds.create({ payment_intent: intent.id, amount: 1_000 })).amount).toBe(1_000);

    const { intent: lostIntent, dispute: lost } = await disputed('order-d12b');
    await test.stripe.disputes.close(lost.id);
    expect(await rejection(test.stripe.refunds.create({ payment_intent: lostIntent.id }))).toMatchObject({ code: 'charge_disputed' });
  });
});

describe('the Disputes API', () => {
  it('replays a POST under its Idempotency-Key, without a second effect', async () => {
    const { dispute } = await disputed('order-d13');
    const params = { evidence: { uncategorized_text: 'Signed delivery slip' }, submit: true };
    const first = await test.stripe.disputes.update(dispute.id, params, { idempotencyKey: 'key-d13' });
    const second = await test.stripe.disputes.update(dispute.id, params, { idempotencyKey: 'key-d13' });
    expect(second.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(second.evidence_details.submission_count).toBe(1);
    expect(second.status).toBe(first.status);
    expect(test.emulator.events({ type: 'charge.dispute.updated' })).toHaveLength(1);
    expect(test.emulator.events({ type: 'charge.dispute.updated' })[0]?.request.idempotency_key).toBe('key-d13');
    const mismatch = await rejection(test.stripe.disputes.update(dispute.id, { metadata: { a: 'b' } }, { idempotencyKey: 'key-d13' }));
    expect(mismatch).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);

    const closed = await test.stripe.disputes.close(dispute.id, {}, { idempotencyKey: 'key-d13-close' });
    const replayed = await test.stripe.disputes.close(dispute.id, {}, { idempotencyKey: 'key-d13-close' });
    expect(closed.status).toBe('lost');
    expect(replayed.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(test.emulator.events({ type: 'charge.dispute.closed' })).toHaveLength(1);
  });

  it('validates its parameters and answers 404 for an unknown dispute', async () => {
    const { dispute } = await disputed('order-d14');
    const unknownField = await raw(test.emulator, 'POST', `/v1/disputes/${dispute.id}`, { params: { evidence: { favourite_colour: 'blue' } } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.json).toMatchObject({ error: { code: 'parameter_unknown', param: 'evidence[favourite_colour]' } });
    const badSubmit = await raw(test.emulator, 'POST', `/v1/disputes/${dispute.id}`, { params: { submit: 'maybe' } });
    expect(badSubmit.status).toBe(400);
    const missing = await rejection(test.stripe.disputes.retrieve('dp_nope'));
    expect(missing).toMatchObject({ statusCode: 404, code: 'resource_missing' });
    expect(await rejection(test.stripe.disputes.close('dp_nope'))).toMatchObject({ statusCode: 404 });
    // A cleared field is null again.
    await test.stripe.disputes.update(dispute.id, { evidence: { product_description: 'x' } });
    const cleared = await test.stripe.disputes.update(dispute.id, { evidence: { product_description: '' } });
    expect(cleared.evidence).toMatchObject({ product_description: null });
    expect(cleared.evidence_details.has_evidence).toBe(false);
  });

  it('lists newest first, filtered by charge or payment_intent, with pagination', async () => {
    const ids: string[] = [];
    for (const order of ['order-d15a', 'order-d15b', 'order-d15c']) ids.push((await disputed(order)).dispute.id);
    const first = await test.stripe.disputes.list({ limit: 2 });
    expect(first.data.map((item) => item.id)).toEqual([ids[2], ids[1]]);
    expect(first.has_more).toBe(true);
    const rest = await test.stripe.disputes.list({ limit: 2, starting_after: first.data[1]?.id ?? '' });
    expect(rest.data.map((item) => item.id)).toEqual([ids[0]]);
    expect((await test.stripe.disputes.list({ payment_intent: 'pi_unknown' })).data).toEqual([]);
  });

  it('lets fault rules name the order of a dispute (its PaymentIntent\'s), for its requests and its webhooks', async () => {
    test.emulator.addFault({ kind: 'webhook_duplicate', eventType: 'charge.dispute.*', orderId: 'order-d16', count: 1 });
    const { dispute } = await disputed('order-d16');
    const created = (await deliveredFor(dispute.id)).filter((event) => event.type === 'charge.dispute.created');
    expect(created).toHaveLength(2);
    expect(created[0]?.id).toBe(created[1]?.id);

    test.emulator.addFault({ kind: 'fail_before_execution', method: 'POST', path: '/v1/disputes/:id', orderId: 'order-d16' });
    expect(await rejection(test.stripe.disputes.update(dispute.id, { metadata: { note: 'x' } }))).toMatchObject({ statusCode: 500 });
    expect((await test.stripe.disputes.update(dispute.id, { metadata: { note: 'x' } })).metadata).toEqual({ note: 'x' });
  });
});

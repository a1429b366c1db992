// Manual capture through the official SDK: holds captured, partly captured, voided or lapsed, and
// their refunds, idempotency and fault rules.
import { setTimeout as sleep } from 'node:timers/promises';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { DEFAULT_AUTHORIZATION_WINDOW_MS } from '../src/index.js';
import { chargeParams, control, errorBody, raw, rejection, sdk, useEmulator } from './helpers.js';

/**
 * Stripe's manual-capture lifecycle, through the official SDK: a hold (`capture_method=manual`)
 * is captured, partly captured, voided, or lapses at `capture_before`; refunds draw only on what
 * was captured; capture and cancel keep Stripe's idempotency semantics and its fault rules.
 */
const test = useEmulator();

const holdParams = (orderId: string, overrides: Partial<Stripe.PaymentIntentCreateParams> = {}) =>
  chargeParams(orderId, { capture_method: 'manual', ...overrides });

async function hold(orderId: string, overrides: Partial<Stripe.PaymentIntentCreateParams> = {}) {
  return test.stripe.paymentIntents.create({ ...holdParams(orderId, overrides), expand: ['latest_charge'] });
}

async function chargeOf(paymentIntentId: string): Promise<Stripe.Charge> {
  const fresh = await test.stripe.paymentIntents.retrieve(paymentIntentId, { expand: ['latest_charge'] });
  return fresh.latest_charge as Stripe.Charge;
}

const eventTypes = (paymentIntentId: string) =>
  test.emulator
    .events()
    .filter((event) => event.data.object.id === paymentIntentId || ('payment_intent' in event.data.object && event.data.object.payment_intent === paymentIntentId))
    .map((event) => event.type)
    .reverse();

describe('manual capture: the hold', () => {
  it('confirming with capture_method=manual authorizes without capturing: requires_capture, amount_capturable, and capture_before 7 days out', async () => {
    const intent = await hold('mc-1');

    expect(intent).toMatchObject({ status: 'requires_capture', capture_method: 'manual', amount: 2_500, amount_capturable: 2_500, amount_received: 0 });
    const charge = intent.latest_charge as Stripe.Charge;
    expect(charge).toMatchObject({ status: 'succeeded', paid: true, captured: false, amount_captured: 0, amount_refunded: 0, balance_transaction: null });
    expect(charge.payment_method_details?.card).toMatchObject({ amount_authorized: 2_500 });
    expect(charge.payment_method_details?.card?.capture_before).toBe(charge.created + DEFAULT_AUTHORIZATION_WINDOW_MS / 1000);
    expect(eventTypes(intent.id)).toEqual(['payment_intent.created', 'charge.succeeded', 'payment_intent.amount_capturable_updated']);
    expect(test.emulator.counters().payments).toMatchObject({ authorizations: 1, captures: 0 });
    const found = await test.stripe.paymentIntents.search({ query: "status:'requires_capture'" });
    expect(found.data.map((item) => item.id)).toEqual([intent.id]);
  });

  it('a declining card declines a hold exactly as it declines a charge', async () => {
    const failure = await rejection(test.stripe.paymentIntents.create(holdParams('mc-2', { payment_method: 'pm_card_visa_chargeDeclinedInsufficientFunds' })));
    expect(failure).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(failure).toMatchObject({ code: 'card_declined', decline_code: 'insufficient_funds' });
  });

  it('an asynchronous method settles to a hold: processing, then requires_capture with payment_intent.amount_capturable_updated', async () => {
    const intent = await test.stripe.paymentIntents.create(holdParams('mc-3', { payment_method: 'pm_card_async_success' }));
    expect(intent.status).toBe('processing');

    expect(test.emulator.settlePaymentIntent(intent.id)).toBe(true);

    const settled = await test.stripe.paymentIntents.retrieve(intent.id, { expand: ['latest_charge'] });
    expect(settled).toMatchObject({ status: 'requires_capture', amount_capturable: 2_500, amount_received: 0 });
    expect((settled.latest_charge as Stripe.Charge).captured).toBe(false);
    expect(eventTypes(intent.id).slice(-2)).toEqual(['charge.succeeded', 'payment_intent.amount_capturable_updated']);
  });
});

describe('manual capture: the capture', () => {
  it('captures the whole hold: succeeded, amount_received, the charge captured, charge.captured and payment_intent.succeeded', async () => {
    const intent = await hold('mc-10');

    const captured = await test.stripe.paymentIntents.capture(intent.id, { metadata: { captured_by: 'test' } }, { idempotencyKey: 'mc-10-capture' });

    expect(captured).toMatchObject({ status: 'succeeded', amount_received: 2_500, amount_capturable: 0, metadata: { order_id: 'mc-10', captured_by: 'test' } });
    expect(await chargeOf(intent.id)).toMatchObject({ captured: true, amount_captured: 2_500, amount_refunded: 0, refunded: false });
    expect(eventTypes(intent.id).slice(-2)).toEqual(['charge.captured', 'payment_intent.succeeded']);
    expect(test.emulator.counters().payments).toMatchObject({ captures: 1 });
  });

  it('a partial capture takes amount_to_capture and releases the rest; refunds then draw only on what was captured', async () => {
    const intent = await hold('mc-11', { amount: 5_000 });

    const captured = await test.stripe.paymentIntents.capture(intent.id, { amount_to_capture: 3_000 });

    expect(captured).toMatchObject({ status: 'succeeded', amount_received: 3_000, amount_capturable: 0 });
    expect(await chargeOf(intent.id)).toMatchObject({ captured: true, amount_captured: 3_000, amount_refunded: 2_000 });
    const tooMuch = await rejection(test.stripe.refunds.create({ payment_intent: intent.id, amount: 3_001 }));
    expect(tooMuch).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    const refund = await test.stripe.refunds.create({ payment_intent: intent.id });
    expect(refund).toMatchObject({ amount: 3_000, status: 'succeeded' });
    expect(await chargeOf(intent.id)).toMatchObject({ amount_refunded: 5_000, refunded: true });
  });

  it('refuses to capture more than amount_capturable, and leaves the hold as it was', async () => {
    const intent = await hold('mc-12');

    const failure = await rejection(test.stripe.paymentIntents.capture(intent.id, { amount_to_capture: 2_501 }));

    expect(failure).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(failure).toMatchObject({ code: 'amount_too_large', param: 'amount_to_capture' });
    expect((await test.stripe.paymentIntents.retrieve(intent.id)).status).toBe('requires_capture');
  });

  it('captures once: a second capture under a new key is refused with payment_intent_unexpected_state, naming the status', async () => {
    const intent = await hold('mc-13');
    await test.stripe.paymentIntents.capture(intent.id, {}, { idempotencyKey: 'mc-13-first' });

    const again = await rejection(test.stripe.paymentIntents.capture(intent.id, {}, { idempotencyKey: 'mc-13-second' }));

    expect(again).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(again).toMatchObject({ code: 'payment_intent_unexpected_state', statusCode: 400 });
    expect(again.message).toContain('could not be captured because it has a status of succeeded');
    expect((await test.stripe.paymentIntents.retrieve(intent.id)).amount_received).toBe(2_500);
    expect(test.emulator.counters().payments.captures).toBe(1);
  });

  it('refuses to capture a PaymentIntent that was never held (automatic capture) and one that was voided', async () => {
    const automatic = await test.stripe.paymentIntents.create(chargeParams('mc-14'));
    expect(await rejection(test.stripe.paymentIntents.capture(automatic.id))).toMatchObject({ code: 'payment_intent_unexpected_state' });

    const voided = await hold('mc-15');
    await test.stripe.paymentIntents.cancel(voided.id);
    const failure = await rejection(test.stripe.paymentIntents.capture(voided.id));
    expect(failure.message).toContain('has a status of canceled');
  });
});

describe('manual capture: the void', () => {
  it('cancelling a hold releases it: canceled with the reason, nothing captured, the charge shows it released, and no Refund exists', async () => {
    const intent = await hold('mc-20');

    const voided = await test.stripe.paymentIntents.cancel(intent.id, { cancellation_reason: 'requested_by_customer' }, { idempotencyKey: 'mc-20-void' });

    expect(voided).toMatchObject({ status: 'canceled', cancellation_reason: 'requested_by_customer', amount_capturable: 0, amount_received: 0 });
    expect(await chargeOf(intent.id)).toMatchObject({ captured: false, amount_captured: 0, amount_refunded: 2_500, refunded: true });
    expect((await test.stripe.refunds.list({ payment_intent: intent.id })).data).toEqual([]);
    expect(eventTypes(intent.id).at(-1)).toBe('payment_intent.canceled');
    expect(test.emulator.counters().payments).toMatchObject({ cancels: 1, refunds: 0 });
  });

  it('refuses to cancel a captured PaymentIntent (refund it instead) and to refund a hold (cancel it instead)', async () => {
    const captured = await hold('mc-21');
    await test.stripe.paymentIntents.capture(captured.id);
    const cancel = await rejection(test.stripe.paymentIntents.cancel(captured.id));
    expect(cancel).toMatchObject({ code: 'payment_intent_unexpected_state' });
    expect(cancel.message).toContain('You cannot cancel this PaymentIntent because it has a status of succeeded');

    const held = await hold('mc-22');
    const refund = await rejection(test.stripe.refunds.create({ payment_intent: held.id }));
    expect(refund).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(refund).toMatchObject({ code: 'charge_not_refundable' });
    expect((await test.stripe.paymentIntents.retrieve(held.id)).status).toBe('requires_capture');
  });
});

describe('manual capture: the lapse at capture_before', () => {
  it('once the clock passes capture_before, the hold lapses: canceled (automatic), charge.expired and payment_intent.canceled, and a capture is refused', async () => {
    const intent = await hold('mc-30');
    test.emulator.advanceClock(DEFAULT_AUTHORIZATION_WINDOW_MS - 60_000);
    expect((await test.stripe.paymentIntents.retrieve(intent.id)).status).toBe('requires_capture');

    test.emulator.advanceClock(120_000);

    const lapsed = await test.stripe.paymentIntents.retrieve(intent.id);
    expect(lapsed).toMatchObject({ status: 'canceled', cancellation_reason: 'automatic', amount_capturable: 0 });
    expect(eventTypes(intent.id).slice(-2)).toEqual(['charge.expired', 'payment_intent.canceled']);
    const capture = await rejection(test.stripe.paymentIntents.capture(intent.id));
    expect(capture).toMatchObject({ code: 'payment_intent_unexpected_state' });
    expect(capture.message).toContain('has a status of canceled');
    expect(test.emulator.counters().payments.holdsLapsed).toBe(1);
  });

  it('lapses on real time too, with a shortened authorization window (a test aid, set at start or over the control API)', async () => {
    const configured = await control(test.emulator, 'POST', '/webhooks/config', { authorizationWindowMs: 1_000 });
    expect(configured.body).toMatchObject({ authorizationWindowMs: 1_000 });
    const intent = await hold('mc-31');
    expect(((intent.latest_charge as Stripe.Charge).payment_method_details?.card?.capture_before ?? 0) - (intent.latest_charge as Stripe.Charge).created).toBe(1);

    await sleep(2_100);

    expect(await test.stripe.paymentIntents.retrieve(intent.id)).toMatchObject({ status: 'canceled', cancellation_reason: 'automatic' });
    // A reset restores the window the emulator started with.
    test.emulator.reset();
    expect((await control(test.emulator, 'GET', '/webhooks/config')).body).toMatchObject({ authorizationWindowMs: DEFAULT_AUTHORIZATION_WINDOW_MS });
  });
});

describe('manual capture: idempotency and faults', () => {
  it('replays a capture and a cancel under their keys byte for byte, and refuses a key reused with other parameters', async () => {
    const intent = await hold('mc-40', { amount: 4_000 });
    const first = await raw(test.emulator, 'POST', `/v1/payment_intents/${intent.id}/capture`, { params: { amount_to_capture: 4_000 }, idempotencyKey: 'mc-40-capture' });
    const replay = await raw(test.emulator, 'POST', `/v1/payment_intents/${intent.id}/capture`, { params: { amount_to_capture: 4_000 }, idempotencyKey: 'mc-40-capture' });
    expect(first.status).toBe(200);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const reused = await raw(test.emulator, 'POST', `/v1/payment_intents/${intent.id}/capture`, { params: { amount_to_capture: 1_000 }, idempotencyKey: 'mc-40-capture' });
    expect(reused.status).toBe(400);
    expect(errorBody(reused)).toMatchObject({ type: 'idempotency_error' });

    const held = await hold('mc-41');
    const cancel = await raw(test.emulator, 'POST', `/v1/payment_intents/${held.id}/cancel`, { idempotencyKey: 'mc-41-void' });
    const cancelReplay = await raw(test.emulator, 'POST', `/v1/payment_intents/${held.id}/cancel`, { idempotencyKey: 'mc-41-void' });
    expect(cancelReplay.text).toBe(cancel.text);
    expect(cancelReplay.headers.get('idempotent-replayed')).toBe('true');
    expect(test.emulator.counters().payments.cancels).toBe(1);
  });

  it('fault rules match a capture or a cancel by the order of the PaymentIntent it acts on: a dropped capture is committed, and its retry replays', async () => {
    const intent = await hold('mc-42');
    const other = await hold('mc-43');
    test.emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/payment_intents/:id/capture', orderId: 'mc-42', count: 1 });
    const noRetries = sdk(test.emulator, { maxNetworkRetries: 0 });

    // Not this order's: untouched by the rule.
    await noRetries.paymentIntents.capture(other.id, {}, { idempotencyKey: 'mc-43-capture' });
    // stripe-node retries a dropped connection once under the same key: the retry is the replay.
    const captured = await noRetries.paymentIntents.capture(intent.id, {}, { idempotencyKey: 'mc-42-capture' });

    expect(captured.status).toBe('succeeded');
    expect(test.emulator.counters()).toMatchObject({ replays: 1, faults: { drop_response: 1 }, payments: { captures: 2 } });
  });

  it('500s before execution on the cancel endpoint leave the hold as it was, and the retry voids it once', async () => {
    const intent = await hold('mc-44');
    test.emulator.addFault({ kind: 'fail_before_execution', status: 500, method: 'POST', path: '/v1/payment_intents/:id/cancel', orderId: 'mc-44', count: 1 });

    const failed = await rejection(test.stripe.paymentIntents.cancel(intent.id, {}, { idempotencyKey: 'mc-44-void' }));
    expect(failed).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect((await test.stripe.paymentIntents.retrieve(intent.id)).status).toBe('requires_capture');

    const voided = await test.stripe.paymentIntents.cancel(intent.id, {}, { idempotencyKey: 'mc-44-void' });
    expect(voided.status).toBe('canceled');
    expect(test.emulator.counters().payments.cancels).toBe(1);
  });
});

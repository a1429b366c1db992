// Radar early fraud warnings through the official SDK: raised after capture by pm_card_createEarlyFraudWarning, the
// signed radar.early_fraud_warning.created webhook, retrieve and list, and a full refund making the warning non-actionable.
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chargeParams, rejection, useEmulator } from './helpers.js';
import { Receiver } from './webhook-receiver.js';

const test = useEmulator();
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

async function warned(orderId: string, overrides: Partial<Stripe.PaymentIntentCreateParams> = {}) {
  return test.stripe.paymentIntents.create(chargeParams(orderId, { payment_method: 'pm_card_createEarlyFraudWarning', ...overrides }));
}

describe('early fraud warnings', () => {
  it('pm_card_createEarlyFraudWarning: the payment succeeds, then a signed radar.early_fraud_warning.created, and no dispute', async () => {
    const intent = await warned('order-f1');
    expect(intent.status).toBe('succeeded');
    await test.emulator.webhooksIdle();

    const deliveries = receiver.ofType('radar.early_fraud_warning.created');
    expect(deliveries).toHaveLength(1);
    const [delivery] = deliveries;
    const event = test.stripe.webhooks.constructEvent(delivery?.body ?? '', delivery?.signature ?? '', secret);
    const warning = event.data.object as Stripe.Radar.EarlyFraudWarning;
    expect(warning).toMatchObject({
      object: 'radar.early_fraud_warning',
      actionable: true,
      charge: intent.latest_charge,
      payment_intent: intent.id,
      fraud_type: 'made_with_stolen_card',
      livemode: false,
    });
    expect(warning.id).toMatch(/^issfr_/);
    expect(typeof warning.created).toBe('number');
    // Raised by Stripe on its own.
    expect(event.request).toEqual({ id: null, idempotency_key: null });
    expect((await test.stripe.disputes.list({ payment_intent: intent.id })).data).toEqual([]);
    expect(receiver.types().filter((type) => type.startsWith('charge.dispute.'))).toEqual([]);
  });

  it('retrieves and lists warnings, by charge and by payment_intent', async () => {
    const intent = await warned('order-f2');
    const other = await warned('order-f2b');
    await test.stripe.paymentIntents.create(chargeParams('order-f2-visa'));

    const all = await test.stripe.radar.earlyFraudWarnings.list();
    expect(all.data.map((warning) => warning.payment_intent)).toEqual([other.id, intent.id]);
    const byIntent = await test.stripe.radar.earlyFraudWarnings.list({ payment_intent: intent.id });
    expect(byIntent.data).toHaveLength(1);
    const [warning] = byIntent.data;
    const byCharge = await test.stripe.radar.earlyFraudWarnings.list({ charge: intent.latest_charge as string });
    expect(byCharge.data.map((item) => item.id)).toEqual([warning?.id]);
    expect(await test.stripe.radar.earlyFraudWarnings.retrieve(warning?.id ?? '')).toMatchObject({ id: warning?.id, charge: intent.latest_charge });

    const missing = await rejection(test.stripe.radar.earlyFraudWarnings.retrieve('issfr_nope'));
    expect(missing).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(missing).toMatchObject({ statusCode: 404, code: 'resource_missing' });
  });

  it('a refund works as usual; a partial one leaves the warning actionable, the full refund makes it non-actionable', async () => {
    const intent = await warned('order-f3');
    await test.stripe.refunds.create({ payment_intent: intent.id, amount: 100 });
    expect((await test.stripe.radar.earlyFraudWarnings.list({ payment_intent: intent.id })).data[0]?.actionable).toBe(true);
    const refund = await test.stripe.refunds.create({ payment_intent: intent.id });
    expect(refund.status).toBe('succeeded');
    await test.emulator.webhooksIdle();
    expect(receiver.ofType('charge.refunded')).toHaveLength(2);

    const [warning] = (await test.stripe.radar.earlyFraudWarnings.list({ payment_intent: intent.id })).data;
    expect(warning?.actionable).toBe(false);
    // The event kept the warning as it was when raised.
    expect((receiver.ofType('radar.early_fraud_warning.created')[0]?.event.data.object as Stripe.Radar.EarlyFraudWarning).actionable).toBe(true);
  });

  it('under manual capture the warning waits for the capture', async () => {
    const intent = await warned('order-f4', { capture_method: 'manual' });
    expect((await test.stripe.radar.earlyFraudWarnings.list({ payment_intent: intent.id })).data).toEqual([]);
    await test.stripe.paymentIntents.capture(intent.id);
    expect((await test.stripe.radar.earlyFraudWarnings.list({ payment_intent: intent.id })).data).toHaveLength(1);
  });
});

// Radar early fraud warnings: one is raised after the early-fraud-warning test card's charge is
// captured, a full refund makes it no longer actionable, and the API retrieves and lists them.
import type Stripe from 'stripe';
import type { Endpoint } from './endpoint.js';
import { resourceMissing } from './errors.js';
import { NO_REQUEST } from './events.js';
import { newId } from './ids.js';
import { paginate } from './pagination.js';
import { readString, rejectUnknownParams } from './params.js';
import { newestFirst, type AccountState } from './store.js';

/**
 * The card network reports the captured charge as fraud, before (and often instead of) a dispute:
 * `radar.early_fraud_warning.created`, actionable until the charge is refunded. Raised by Stripe,
 * so the event carries no request.
 */
export function raiseEarlyFraudWarning(account: AccountState, charge: Stripe.Charge, now: number): Stripe.Radar.EarlyFraudWarning {
  const warning: Stripe.Radar.EarlyFraudWarning = {
    id: newId('issfr'),
    object: 'radar.early_fraud_warning',
    actionable: true,
    charge: charge.id,
    created: now,
    fraud_type: 'made_with_stolen_card',
    livemode: false,
    ...(typeof charge.payment_intent === 'string' && { payment_intent: charge.payment_intent }),
  };
  account.earlyFraudWarnings.set(warning.id, warning);
  account.events.record('radar.early_fraud_warning.created', warning, now, NO_REQUEST);
  return warning;
}

/**
 * A fully refunded charge's warnings need no action any more (the money went back, so there is
 * nothing left to dispute): `actionable` becomes false, as on Stripe. A partial refund leaves them
 * actionable: the rest of the charge can still be disputed.
 */
export function settleEarlyFraudWarnings(account: AccountState, charge: Stripe.Charge): void {
  if (!charge.refunded) return;
  for (const warning of account.earlyFraudWarnings.values()) {
    if (warning.charge === charge.id) warning.actionable = false;
  }
}

export const retrieveEarlyFraudWarning: Endpoint = {
  method: 'GET',
  path: '/v1/radar/early_fraud_warnings/:id',
  prepare(ctx) {
    rejectUnknownParams(ctx.params, [], ['expand']);
    const id = ctx.pathParams.id ?? '';
    const warning = ctx.account.earlyFraudWarnings.get(id);
    if (!warning) throw resourceMissing('early fraud warning', id, 'early_fraud_warning', 404);
    return () => warning;
  },
};

export const listEarlyFraudWarnings: Endpoint = {
  method: 'GET',
  path: '/v1/radar/early_fraud_warnings',
  prepare(ctx) {
    rejectUnknownParams(ctx.params, ['charge', 'payment_intent', 'limit', 'starting_after', 'ending_before'], ['created', 'expand']);
    const chargeId = readString(ctx.params, 'charge');
    const paymentIntentId = readString(ctx.params, 'payment_intent');
    return () => {
      const matching = newestFirst(ctx.account.earlyFraudWarnings).filter(
        (warning) =>
          (chargeId === undefined || warning.charge === chargeId) &&
          (paymentIntentId === undefined || warning.payment_intent === paymentIntentId),
      );
      return paginate(matching, ctx.params, '/v1/radar/early_fraud_warnings', 'radar.early_fraud_warning');
    };
  },
};

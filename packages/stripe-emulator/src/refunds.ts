// The Refunds API: `POST /v1/refunds` (by PaymentIntent or charge, whole or partial, within what
// was captured, never of a charged-back charge), retrieve and list.
import type Stripe from 'stripe';
import { formatAmount } from './currencies.js';
import { refuseRefundIfDisputed } from './disputes.js';
import { settleEarlyFraudWarnings } from './early-fraud-warnings.js';
import type { Endpoint } from './endpoint.js';
import { invalidRequest, resourceMissing, type ApiError } from './errors.js';
import { newId } from './ids.js';
import { paginate } from './pagination.js';
import { readEnum, readInteger, readMetadata, readString, rejectUnknownParams } from './params.js';
import { findTestCard } from './payment-methods.js';
import { newestFirst, type AccountState } from './store.js';

const REASONS = ['duplicate', 'fraudulent', 'requested_by_customer'] as const;

/** What a refund names: Stripe accepts the PaymentIntent, the charge, or both if they agree. */
interface RefundTarget {
  paymentIntentId: string | null;
  chargeId: string | null;
}

function resolveTarget(account: AccountState, paymentIntentId?: string, chargeId?: string): RefundTarget {
  if (paymentIntentId === undefined && chargeId === undefined) {
    throw invalidRequest('One of the following params should be provided for this request: payment_intent or charge.', {
      code: 'parameter_missing',
    });
  }
  if (paymentIntentId !== undefined && !account.paymentIntents.has(paymentIntentId)) {
    throw resourceMissing('payment_intent', paymentIntentId, 'payment_intent');
  }
  if (chargeId !== undefined && !account.charges.has(chargeId)) {
    throw resourceMissing('charge', chargeId, 'charge');
  }
  return { paymentIntentId: paymentIntentId ?? null, chargeId: chargeId ?? null };
}

/** The charge a refund draws on; only a succeeded one can be refunded. */
function refundableCharge(account: AccountState, target: RefundTarget): Stripe.Charge {
  if (target.chargeId !== null) {
    const charge = account.charges.get(target.chargeId);
    if (!charge) throw resourceMissing('charge', target.chargeId, 'charge');
    if (target.paymentIntentId !== null && charge.payment_intent !== target.paymentIntentId) {
      throw invalidRequest(`Charge ${charge.id} does not belong to PaymentIntent ${target.paymentIntentId}.`, {
        param: 'charge',
      });
    }
    if (charge.status !== 'succeeded') {
      throw invalidRequest(`Charge ${charge.id} has not succeeded and cannot be refunded.`, {
        param: 'charge',
        code: 'charge_not_refundable',
      });
    }
    if (!charge.captured) throw uncapturedNotRefundable(charge.payment_intent);
    return charge;
  }
  const paymentIntentId = target.paymentIntentId ?? '';
  const paymentIntent = account.paymentIntents.get(paymentIntentId);
  const charge =
    typeof paymentIntent?.latest_charge === 'string' ? account.charges.get(paymentIntent.latest_charge) : undefined;
  if (paymentIntent?.status === 'requires_capture') throw uncapturedNotRefundable(paymentIntentId);
  if (paymentIntent?.status !== 'succeeded' || charge?.status !== 'succeeded') {
    throw invalidRequest(`This PaymentIntent (${paymentIntentId}) does not have a successful charge to refund.`, {
      param: 'payment_intent',
    });
  }
  return charge;
}

/**
 * A hold has no captured money to refund: it is released by cancelling its PaymentIntent, which
 * costs nothing (the emulator refuses a refund here where Stripe may treat it as a release).
 */
function uncapturedNotRefundable(paymentIntent: string | Stripe.PaymentIntent | null): ApiError {
  const id = typeof paymentIntent === 'string' ? paymentIntent : (paymentIntent?.id ?? 'its PaymentIntent');
  return invalidRequest(
    `This charge has not been captured, so there is nothing to refund. Cancel the PaymentIntent (${id}) to release the authorization.`,
    { code: 'charge_not_refundable' },
  );
}

export const createRefund: Endpoint = {
  method: 'POST',
  path: '/v1/refunds',
  prepare(ctx) {
    const { params } = ctx;
    rejectUnknownParams(
      params,
      ['payment_intent', 'charge', 'amount', 'reason', 'metadata'],
      ['currency', 'customer', 'customer_account', 'expand', 'instructions_email', 'origin', 'refund_application_fee', 'reverse_transfer'],
    );
    const target = resolveTarget(ctx.account, readString(params, 'payment_intent'), readString(params, 'charge'));
    const requested = readInteger(params, 'amount', { min: 1 });
    const reason = readEnum(params, 'reason', REASONS) ?? null;
    const metadata = readMetadata(params);
    return () => {
      const charge = refundableCharge(ctx.account, target);
      refuseRefundIfDisputed(ctx.account, charge);
      // What is left to refund of what was captured (a partial capture released the rest).
      const remaining = charge.amount - charge.amount_refunded;
      if (remaining <= 0) {
        throw invalidRequest(`Charge ${charge.id} has already been refunded.`, { code: 'charge_already_refunded' });
      }
      const amount = requested ?? remaining;
      if (amount > remaining) {
        throw invalidRequest(
          `Refund amount (${formatAmount(amount, charge.currency)}) is greater than unrefunded amount on charge (${formatAmount(remaining, charge.currency)})`,
          { param: 'amount' },
        );
      }
      const now = ctx.clock.nowSeconds();
      const settlesAsync = typeof charge.payment_method === 'string' && findTestCard(charge.payment_method)?.settlesAsync !== undefined;
      const refund: Stripe.Refund = {
        id: newId('re'),
        object: 'refund',
        amount,
        balance_transaction: newId('txn'),
        charge: charge.id,
        created: now,
        currency: charge.currency,
        customer: typeof charge.customer === 'string' ? charge.customer : null,
        customer_account: null,
        destination_details: {
          card: { reference_status: 'pending', reference_type: 'acquirer_reference_number', type: 'refund' },
          type: 'card',
        },
        metadata,
        payment_intent: typeof charge.payment_intent === 'string' ? charge.payment_intent : null,
        payment_method: charge.payment_method,
        reason,
        receipt_number: null,
        source_transfer_reversal: null,
        // Refunds of a payment that settled asynchronously settle asynchronously too.
        status: settlesAsync ? 'pending' : 'succeeded',
        transfer_reversal: null,
      };
      ctx.account.refunds.set(refund.id, refund);
      ctx.counters.payment('refunds');
      charge.amount_refunded += amount;
      charge.refunded = charge.amount_refunded === charge.amount;
      const request = { requestId: ctx.requestId, idempotencyKey: ctx.idempotencyKey };
      ctx.account.events.record('refund.created', refund, now, request);
      ctx.account.events.record('charge.refunded', charge, now, request);
      settleEarlyFraudWarnings(ctx.account, charge);
      if (settlesAsync) ctx.settlements.scheduleRefund(ctx.account, refund.id);
      return structuredClone(refund);
    };
  },
};

export const retrieveRefund: Endpoint = {
  method: 'GET',
  path: '/v1/refunds/:id',
  prepare(ctx) {
    rejectUnknownParams(ctx.params, [], ['expand']);
    const id = ctx.pathParams.id ?? '';
    const refund = ctx.account.refunds.get(id);
    if (!refund) throw resourceMissing('refund', id, 'id', 404);
    return () => refund;
  },
};

export const listRefunds: Endpoint = {
  method: 'GET',
  path: '/v1/refunds',
  prepare(ctx) {
    rejectUnknownParams(ctx.params, ['payment_intent', 'charge', 'limit', 'starting_after', 'ending_before'], ['created', 'expand']);
    const paymentIntentId = readString(ctx.params, 'payment_intent');
    const chargeId = readString(ctx.params, 'charge');
    if (paymentIntentId !== undefined && !ctx.account.paymentIntents.has(paymentIntentId)) {
      throw resourceMissing('payment_intent', paymentIntentId, 'payment_intent');
    }
    if (chargeId !== undefined && !ctx.account.charges.has(chargeId)) {
      throw resourceMissing('charge', chargeId, 'charge');
    }
    return () => {
      const matching = newestFirst(ctx.account.refunds).filter(
        (refund) =>
          (paymentIntentId === undefined || refund.payment_intent === paymentIntentId) &&
          (chargeId === undefined || refund.charge === chargeId),
      );
      return paginate(matching, ctx.params, '/v1/refunds', 'refund');
    };
  },
};

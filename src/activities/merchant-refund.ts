// The merchant refund activity: a refund of a completed order the merchant asked for, made once
// through its protocol (src/money/payments/merchant-refund-protocol.ts).
import { log } from '@temporalio/activity';
import type Stripe from 'stripe';
import { NeedsReviewError } from '../domain/failures.js';
import {
  recordMerchantRefund,
  recordMerchantRefundRefusal,
  refundablePayment,
  registerMerchantRefund,
  type MerchantRefundRequest,
  type MerchantRefundState,
} from '../money/payments/merchant-refund-protocol.js';
import { classifyStripeError } from '../money/stripe/error-classification.js';
import { countReplay } from '../platform/telemetry/activity-metrics.js';
import { currentActivityKey } from './activity-key.js';
import { DEFAULT_KEY_RETENTION_MS, type ActivityDeps } from './deps.js';

/** Stripe metadata marking a refund the merchant asked for, not a saga compensation (see I2). */
export const MERCHANT_REFUND_METADATA = 'merchant_refund';

export interface MerchantRefundInput {
  orderId: string;
  /** The API's refund request ID (`rfd_...`), fixed with its Idempotency-Key. */
  refundRequestId: string;
  amount: number;
  workflowId: string;
  originalRunId: string;
}

export interface MerchantRefundResult {
  refundId: string;
  paymentIntentId: string;
  amount: number;
  currency: string;
  /** 'ledger': answered from Postgres, Stripe not called; 'stripe-search': adopted an existing refund. */
  resolvedBy: 'stripe' | 'ledger' | 'stripe-search';
}

/**
 * A merchant-initiated refund of a completed order, full or partial, once, in the three phases
 * of its protocol (src/money/payments/merchant-refund-protocol.ts):
 *   1. register the refund's key (the Stripe key, derived from the refund workflow's original run
 *      ID and this activity's ID) and claim its refund request for it; an answered key, or a
 *      refund request another key already refunded, is answered from Postgres, Stripe not called;
 *   2. find this refund at Stripe, or create it under the key. Stripe is searched first, so a
 *      retry after Stripe forgot the key (24 h) cannot refund twice: a second partial refund
 *      would otherwise be accepted;
 *   3. record it: the key's outcome, the ledger's refund and the `order.merchant_refunded` event,
 *      in one transaction.
 */
export function createMerchantRefund(deps: ActivityDeps) {
  const retention = { retentionMs: deps.keyRetentionMs ?? DEFAULT_KEY_RETENTION_MS };

  return async function merchantRefund(input: MerchantRefundInput): Promise<MerchantRefundResult> {
    const key = currentActivityKey(input.originalRunId);
    const ledgerKey = currentActivityKey(input.originalRunId, 'ledger');
    const request: MerchantRefundRequest = { orderId: input.orderId, refundRequestId: input.refundRequestId, amount: input.amount };

    // Phase 1: the intent is on record before anything leaves the building.
    const registered = await registerMerchantRefund(deps.db, request, key, retention);
    if (registered.stage === 'refunded' || registered.stage === 'refused') {
      log.info('merchant refund answered from Postgres; Stripe not called', { idempotencyKey: key, stage: registered.stage });
      countReplay('ledger');
      return answer(registered, key);
    }
    if (registered.stage === 'claimed-elsewhere') return answer(registered, key);
    const payment = await refundablePayment(deps.db, input.orderId);
    if ('refusal' in payment) return answer(await recordMerchantRefundRefusal(deps.db, request, key, payment.refusal), key);
    const { paymentIntentId } = payment;

    // Phase 2: our refund at Stripe, found or made under the key.
    let refund = await findOwnRefund(deps.stripe, paymentIntentId, input);
    let resolvedBy: MerchantRefundResult['resolvedBy'] = 'stripe-search';
    if (!refund) {
      resolvedBy = 'stripe';
      log.info('creating merchant Refund', { idempotencyKey: key, paymentIntentId, orderId: input.orderId });
      try {
        refund = await deps.stripe.refunds.create(
          {
            payment_intent: paymentIntentId,
            amount: input.amount,
            reason: 'requested_by_customer',
            metadata: {
              order_id: input.orderId,
              [MERCHANT_REFUND_METADATA]: 'true',
              refund_request_id: input.refundRequestId,
              workflow_id: input.workflowId,
              run_id: input.originalRunId,
            },
          },
          { idempotencyKey: key },
        );
      } catch (error) {
        const classified = classifyStripeError(error);
        if (classified.kind === 'retryable') throw error;
        const reason = `refund of ${input.amount} on ${paymentIntentId} refused by Stripe: ${classified.kind === 'declined' ? classified.code : classified.message}`;
        return answer(await recordMerchantRefundRefusal(deps.db, request, key, reason), key);
      }
    }

    // Phase 3: the refund, the ledger's refund and its event, together.
    const recorded = await recordMerchantRefund(deps.db, request, { key, ledgerKey }, {
      refundId: refund.id,
      paymentIntentId,
      amount: refund.amount,
      currency: refund.currency,
    });
    return { ...recorded, resolvedBy };
  };
}

/** The activity's answer for a refund that has one: the refund, or its refusal as a failure. */
function answer(state: MerchantRefundState, key: string): MerchantRefundResult {
  switch (state.stage) {
    case 'unknown':
      // Only if the key's record vanished under us: the next attempt registers it again.
      throw new Error(`merchant refund key '${key}' has no outcome recorded; retrying`);
    case 'refunded':
      return { ...state.refund, resolvedBy: 'ledger' };
    case 'refused':
      throw new NeedsReviewError(state.refusal.reason);
    case 'claimed-elsewhere':
      throw new NeedsReviewError(
        `refund request '${state.claimKey}' is being refunded under another key than '${key}', with no outcome yet; refusing to refund it twice`,
      );
  }
}

/**
 * This refund request's refund, if Stripe already has one: made under this run's key (its answer
 * lost, or the key forgotten by Stripe), or by another run for the same refund request.
 */
async function findOwnRefund(stripe: Stripe, paymentIntentId: string, input: MerchantRefundInput): Promise<Stripe.Refund | null> {
  const refunds = await stripe.refunds.list({ payment_intent: paymentIntentId, limit: 100 });
  return (
    refunds.data.find(
      (refund) =>
        refund.metadata?.[MERCHANT_REFUND_METADATA] === 'true' &&
        (refund.metadata.run_id === input.originalRunId || refund.metadata.refund_request_id === input.refundRequestId),
    ) ?? null
  );
}

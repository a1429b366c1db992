import { log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type Stripe from 'stripe';
import { withTransaction } from '../platform/db/transaction.js';
import { FailureType } from '../domain/failures.js';
import { postLedgerTransaction } from '../money/ledger/ledger.js';
import { classifyStripeError } from '../money/stripe/error-classification.js';
import { currentActivityKey } from './activity-key.js';
import type { ActivityDeps } from './deps.js';
import { mappingFailures } from './failures.js';

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
 * A merchant-initiated refund of a completed order, full or partial, once: the Stripe key and
 * the ledger key both derive from the refund workflow's original run ID and this activity's ID.
 * A recorded refund is answered from the ledger; before creating one, Stripe is searched for a
 * refund carrying this run's metadata, so a retry after Stripe forgot the key (24 h) cannot
 * refund twice: a second partial refund would otherwise be accepted.
 */
export function createMerchantRefund(deps: ActivityDeps) {
  return function merchantRefund(input: MerchantRefundInput): Promise<MerchantRefundResult> {
    return mappingFailures(() => refundOnce(input));
  };

  async function refundOnce(input: MerchantRefundInput): Promise<MerchantRefundResult> {
    const stripeKey = currentActivityKey(input.originalRunId);
    const ledgerKey = currentActivityKey(input.originalRunId, 'ledger');

    const recorded = await deps.db.query<{ stripe_object_id: string; amount_minor: string; currency: string; payment_intent_id: string }>(
      `select t.stripe_object_id, t.amount_minor, t.currency, o.payment_intent_id
         from ledger_transactions t join orders o on o.order_id = t.order_id where t.idempotency_key = $1`,
      [ledgerKey],
    );
    const done = recorded.rows[0];
    if (done) {
      return { refundId: done.stripe_object_id, paymentIntentId: done.payment_intent_id, amount: Number(done.amount_minor), currency: done.currency, resolvedBy: 'ledger' };
    }

    const { rows } = await deps.db.query<{ status: string; payment_intent_id: string | null; amount_minor: string; currency: string }>(
      'select status, payment_intent_id, amount_minor, currency from orders where order_id = $1',
      [input.orderId],
    );
    const order = rows[0];
    if (order?.status !== 'completed' || !order.payment_intent_id) {
      throw ApplicationFailure.nonRetryable(
        `order '${input.orderId}' is ${order ? `'${order.status}'` : 'not recorded'}; only a completed order can be refunded by the merchant`,
        FailureType.NeedsReview,
      );
    }
    const paymentIntentId = order.payment_intent_id;
    const metadata = {
      order_id: input.orderId,
      [MERCHANT_REFUND_METADATA]: 'true',
      refund_request_id: input.refundRequestId,
      workflow_id: input.workflowId,
      run_id: input.originalRunId,
    };
    let refund = await findOwnRefund(deps.stripe, paymentIntentId, input.originalRunId);
    let resolvedBy: MerchantRefundResult['resolvedBy'] = 'stripe-search';
    if (!refund) {
      resolvedBy = 'stripe';
      log.info('creating merchant Refund', { idempotencyKey: stripeKey, paymentIntentId, amount: input.amount });
      try {
        refund = await deps.stripe.refunds.create(
          { payment_intent: paymentIntentId, amount: input.amount, reason: 'requested_by_customer', metadata },
          { idempotencyKey: stripeKey },
        );
      } catch (error) {
        const classified = classifyStripeError(error);
        if (classified.kind === 'retryable') throw error;
        throw ApplicationFailure.nonRetryable(
          `refund of ${input.amount} on ${paymentIntentId} refused by Stripe: ${classified.kind === 'declined' ? classified.code : classified.message}`,
          FailureType.NeedsReview,
        );
      }
    }
    const created = refund;
    await withTransaction(deps.db, (client) =>
      postLedgerTransaction(client, {
        orderId: input.orderId,
        kind: 'refund',
        amountMinor: created.amount,
        currency: created.currency,
        stripeObjectId: created.id,
        idempotencyKey: ledgerKey,
      }),
    );
    return { refundId: created.id, paymentIntentId, amount: created.amount, currency: created.currency, resolvedBy };
  }
}

async function findOwnRefund(stripe: Stripe, paymentIntentId: string, runId: string): Promise<Stripe.Refund | null> {
  const refunds = await stripe.refunds.list({ payment_intent: paymentIntentId, limit: 100 });
  return refunds.data.find((refund) => refund.metadata?.run_id === runId && refund.metadata[MERCHANT_REFUND_METADATA] === 'true') ?? null;
}

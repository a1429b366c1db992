// The charge-first shape's compensation: refunds the charge that exists, at most once.
import { log } from '@temporalio/activity';
import type Stripe from 'stripe';
import { withTransaction } from '../../platform/db/transaction.js';
import { ChargeFirstActivityId } from '../../domain/activity-ids.js';
import { FailureType, NeedsReviewError } from '../../domain/failures.js';
import { failpoint } from '../../platform/failpoint.js';
import { fenceKey, finishKey, readKey, registerKey } from '../../money/idempotency/activity-idempotency-store.js';
import { deriveIdempotencyKey } from '../../money/idempotency/idempotency-key.js';
import { requestHash } from '../../money/idempotency/request-hash.js';
import { setOrderStatus } from '../../orders/orders.js';
import { classifyStripeError } from '../../money/stripe/error-classification.js';
import { findSucceededPaymentIntent } from '../../money/stripe/order-search.js';
import { currentActivityKey } from '../activity-key.js';
import { CHARGE_SCOPE, type StoredCharge } from './charge-payment.js';
import { settleCharge } from './settle-payment.js';
import { DEFAULT_KEY_RETENTION_MS, type ActivityDeps } from '../deps.js';
import type { RefundPaymentInput, RefundResult } from './types.js';
import { countReplay } from '../../platform/telemetry/activity-metrics.js';

const SCOPE = 'stripe.refund';

/** What needs refunding, once the charge's outcome is known. */
type ResolvedCharge =
  | { charged: true; paymentIntentId: string; amount: number; currency: string; resolvedBy: RefundResult['resolvedBy'] }
  | { charged: false; paymentIntentToCancel: string | null };

/**
 * Refunds the order's charge, in three named phases:
 *   1. resolve the charge: from our key record when it has an outcome, otherwise (the charge
 *      timed out, was cancelled, or its worker died) by asking Stripe, and fencing the charge key
 *      when Stripe holds nothing so no late attempt can charge after we decided not to refund;
 *   2. register the refund's own key as pending;
 *   3. create the Refund under that key and record the outcome.
 * It refunds only what exists, and at most once.
 */
export function createRefundPayment(deps: ActivityDeps) {
  const keyRetentionMs = deps.keyRetentionMs ?? DEFAULT_KEY_RETENTION_MS;

  return refundOnce;

  async function refundOnce(input: RefundPaymentInput): Promise<RefundResult> {
    const refundKey = currentActivityKey(input.originalRunId);
    const chargeKey = deriveIdempotencyKey({ runId: input.originalRunId, activityId: input.chargeActivityId });

    // Phase 1: what was charged?
    const charge = await resolveCharge(deps, input.orderId, chargeKey, keyRetentionMs, currentActivityKey(input.originalRunId, 'cancel-settling'));
    if (!charge.charged) {
      if (charge.paymentIntentToCancel) {
        await cancelIncomplete(deps.stripe, charge.paymentIntentToCancel, currentActivityKey(input.originalRunId, 'cancel'));
      }
      return { refundId: null, paymentIntentId: null, amount: 0, currency: null, resolvedBy: 'nothing-charged' };
    }

    // Phase 2: register the refund intent.
    const request = { payment_intent: charge.paymentIntentId, amount: charge.amount };
    const record = await registerKey<RefundResult>(deps.db, {
      scope: SCOPE,
      key: refundKey,
      requestHash: requestHash(request),
      retentionMs: keyRetentionMs,
    });
    if (record.state === 'completed' && record.result) {
      log.info('refund answered from the ledger; Stripe not called', { idempotencyKey: refundKey });
      countReplay('ledger');
      return record.result;
    }

    // Phase 3: the Stripe call, then the outcome.
    log.info('creating Refund', { idempotencyKey: refundKey, paymentIntentId: charge.paymentIntentId, orderId: input.orderId });
    const refund = await createRefund(deps.stripe, input, refundKey, request);
    failpoint('refund.after-stripe');
    const result: RefundResult = {
      refundId: refund.id,
      paymentIntentId: charge.paymentIntentId,
      amount: refund.amount,
      currency: refund.currency,
      resolvedBy: charge.resolvedBy,
    };
    const stored = await withTransaction(deps.db, async (client) => {
      if (!(await finishKey(client, SCOPE, refundKey, 'completed', result))) {
        const existing = await readKey<RefundResult>(client, SCOPE, refundKey);
        if (existing?.result) return existing.result;
      }
      await setOrderStatus(client, input.orderId, { status: 'compensating', refundId: refund.id });
      return result;
    });
    failpoint('refund.after-commit');
    return stored;
  }
}

async function resolveCharge(
  deps: ActivityDeps,
  orderId: string,
  chargeKey: string,
  keyRetentionMs: number,
  cancelSettlingKey: string,
): Promise<ResolvedCharge> {
  const record = await readKey<StoredCharge>(deps.db, CHARGE_SCOPE, chargeKey);
  const stored = record?.result;
  if (record?.state === 'completed' && stored && !('failure' in stored)) {
    return { charged: true, ...stored, resolvedBy: 'ledger' };
  }
  if (record?.state === 'processing' && stored && !('failure' in stored)) {
    return resolveSettling(deps, orderId, chargeKey, stored.paymentIntentId, cancelSettlingKey);
  }
  if (record?.state === 'failed' && stored && 'failure' in stored) {
    const cancellable = stored.failure === FailureType.PaymentIncomplete ? stored.paymentIntentId : null;
    return { charged: false, paymentIntentToCancel: cancellable };
  }
  // Pending or never registered: only Stripe knows.
  const intent = await findSucceededPaymentIntent(deps.stripe, orderId);
  if (intent) {
    log.warn('charge outcome was unknown; Stripe holds a succeeded charge, refunding it', {
      idempotencyKey: chargeKey,
      paymentIntentId: intent.id,
    });
    return { charged: true, paymentIntentId: intent.id, amount: intent.amount, currency: intent.currency, resolvedBy: 'stripe-search' };
  }
  const fenced = await withTransaction(deps.db, (client) =>
    fenceKey<StoredCharge>(client, {
      scope: CHARGE_SCOPE,
      key: chargeKey,
      retentionMs: keyRetentionMs,
      result: { failure: FailureType.ChargeAttemptExpired, fenced: true, reason: 'compensated before the charge completed' },
    }),
  );
  // The charge finished while we looked: refund what it recorded.
  if (fenced.state === 'completed' && fenced.result && !('failure' in fenced.result)) {
    return { charged: true, ...fenced.result, resolvedBy: 'ledger' };
  }
  // Or Stripe answered it while we looked, and the payment is settling: settle it first.
  if (fenced.state === 'processing' && fenced.result && !('failure' in fenced.result)) {
    return resolveSettling(deps, orderId, chargeKey, fenced.result.paymentIntentId, cancelSettlingKey);
  }
  return { charged: false, paymentIntentToCancel: null };
}

/**
 * The charge is still settling: a refund cannot draw on it, and leaving it would let it settle
 * after the saga gave up. It is cancelled; if it settled first, it is recorded and refunded; if
 * Stripe can neither cancel nor settle it yet, the compensation retries until it can.
 */
async function resolveSettling(
  deps: ActivityDeps,
  orderId: string,
  chargeKey: string,
  paymentIntentId: string,
  cancelKey: string,
): Promise<ResolvedCharge> {
  const settlement = await settleCharge(deps, {
    orderId,
    chargeKey,
    paymentIntentId,
    cancel: { idempotencyKey: cancelKey, code: 'payment_intent_canceled' },
  });
  switch (settlement.kind) {
    case 'succeeded':
      return { charged: true, ...settlement.result, resolvedBy: 'ledger' };
    case 'failed':
      if (!('failure' in settlement.stored) && settlement.stored.status === 'succeeded') {
        return { charged: true, ...settlement.stored, resolvedBy: 'ledger' };
      }
      return { charged: false, paymentIntentToCancel: null };
    case 'settling':
      throw new Error(
        `payment ${paymentIntentId} is still ${settlement.paymentIntent.status} and Stripe will not cancel it yet; retrying until it settles`,
      );
  }
}

async function createRefund(
  stripe: Stripe,
  input: RefundPaymentInput,
  refundKey: string,
  request: { payment_intent: string; amount: number },
): Promise<Stripe.Refund> {
  try {
    return await stripe.refunds.create(
      {
        ...request,
        reason: 'requested_by_customer',
        metadata: {
          order_id: input.orderId,
          workflow_id: input.workflowId,
          run_id: input.originalRunId,
          activity_id: ChargeFirstActivityId.refundPayment,
        },
      },
      { idempotencyKey: refundKey },
    );
  } catch (error) {
    const classified = classifyStripeError(error);
    if (classified.kind === 'retryable') throw error;
    // Already fully refunded but not under our key (Stripe forgot the key, or a person refunded
    // it in the Dashboard): adopt our own refund if Stripe has it, otherwise a person decides.
    const adopted = await findOwnRefund(stripe, request.payment_intent, input);
    if (adopted) return adopted;
    throw new NeedsReviewError(`refund of ${request.payment_intent} refused by Stripe: ${classified.kind === 'declined' ? classified.code : classified.message}`);
  }
}

async function findOwnRefund(stripe: Stripe, paymentIntentId: string, input: RefundPaymentInput): Promise<Stripe.Refund | null> {
  const refunds = await stripe.refunds.list({ payment_intent: paymentIntentId, limit: 100 });
  return (
    refunds.data.find(
      (refund) => refund.metadata?.run_id === input.originalRunId && refund.metadata.activity_id === ChargeFirstActivityId.refundPayment,
    ) ?? null
  );
}

/** A PaymentIntent left waiting for the customer is cancelled, so it can never settle later. */
async function cancelIncomplete(stripe: Stripe, paymentIntentId: string, cancelKey: string): Promise<void> {
  try {
    await stripe.paymentIntents.cancel(paymentIntentId, {}, { idempotencyKey: cancelKey });
  } catch (error) {
    const classified = classifyStripeError(error);
    if (classified.kind === 'retryable') throw error;
    // Already cancelled or succeeded-and-refunded elsewhere: nothing of ours remains open.
    log.warn('could not cancel incomplete PaymentIntent', { paymentIntentId, reason: classified.kind });
  }
}

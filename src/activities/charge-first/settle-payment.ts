// The charge-first shape's settlement of a charge that Stripe could not decide at once.
import { log } from '@temporalio/activity';
import type Stripe from 'stripe';
import { FailureType, NeedsReviewError } from '../../domain/failures.js';
import { readKey } from '../../money/idempotency/activity-idempotency-store.js';
import { deriveIdempotencyKey } from '../../money/idempotency/idempotency-key.js';
import { classifyStripeError } from '../../money/stripe/error-classification.js';
import {
  answerFromRecord,
  CHARGE_SCOPE,
  failureFor,
  isSettling,
  recordCharge,
  recordDecline,
  type DeclinedCharge,
  type SettlingCharge,
  type StoredCharge,
} from './charge-payment.js';
import {
  DEFAULT_AUTHENTICATION_DEADLINE_MS,
  DEFAULT_PROCESSING_DEADLINE_MS,
  DEFAULT_SETTLEMENT_RECHECK_MS,
  type ActivityDeps,
} from '../deps.js';
import type { ChargeOutcome, ChargeResult, SettlePaymentInput } from './types.js';

/** Where a settling payment stands once Stripe was asked, and what was recorded for it. */
export type Settlement =
  | { kind: 'succeeded'; result: ChargeResult }
  | { kind: 'failed'; stored: StoredCharge }
  | { kind: 'settling'; paymentIntent: Stripe.PaymentIntent };

/** Cancel a payment still settling, under this key; its decline says why. */
export interface CancelSettling {
  idempotencyKey: string;
  code: string;
}

/**
 * Settles a charge whose PaymentIntent was still settling when the charge answered. Stripe is
 * the source of truth: the webhook only wakes the saga, and this activity retrieves the
 * PaymentIntent and records what it says under the charge's own key:
 *   - succeeded: the ledger's charge, once (the key's unique ledger row), and the order paid;
 *   - failed: a decline, as if the card had been declined synchronously;
 *   - still settling: answers pending, and the saga waits again; past the deadline for its
 *     status, the PaymentIntent is cancelled (under a key of its own) and the order declined.
 * Every retry and replay answers from the key once it is final, so it is recorded once.
 */
export function createSettlePayment(deps: ActivityDeps) {
  const recheckAfterMs = deps.settlementRecheckMs ?? DEFAULT_SETTLEMENT_RECHECK_MS;
  const deadlineMs: Record<SettlingCharge['status'], number> = {
    processing: deps.processingDeadlineMs ?? DEFAULT_PROCESSING_DEADLINE_MS,
    requires_action: deps.authenticationDeadlineMs ?? DEFAULT_AUTHENTICATION_DEADLINE_MS,
  };

  return settle;

  async function settle(input: SettlePaymentInput): Promise<ChargeOutcome> {
    const chargeKey = deriveIdempotencyKey({ runId: input.originalRunId, activityId: input.chargeActivityId });
    const record = await readKey<StoredCharge>(deps.db, CHARGE_SCOPE, chargeKey);
    if (!record) {
      throw new NeedsReviewError(`no charge recorded under key '${chargeKey}' to settle`);
    }
    // Final already (an earlier attempt, or the refund's resolution): the same answer again.
    if (record.state !== 'processing') return answerFromRecord(record, chargeKey, recheckAfterMs);
    const settling = record.result as SettlingCharge;

    const expired = Date.now() - record.createdAt.getTime() >= deadlineMs[settling.status];
    const cancel: CancelSettling | null = expired
      ? {
          idempotencyKey: deriveIdempotencyKey({ runId: input.originalRunId, activityId: input.chargeActivityId, step: 'expire' }),
          code: settling.status === 'requires_action' ? 'payment_intent_authentication_failure' : 'payment_intent_payment_attempt_expired',
        }
      : null;
    log.info('settling payment', {
      idempotencyKey: chargeKey,
      paymentIntentId: settling.paymentIntentId,
      trigger: input.trigger.kind,
      ...(input.trigger.kind === 'webhook' && { eventId: input.trigger.eventId }),
      expired,
    });
    const settlement = await settleCharge(deps, { orderId: input.orderId, chargeKey, paymentIntentId: settling.paymentIntentId, cancel });
    switch (settlement.kind) {
      case 'succeeded':
        return settlement.result;
      case 'failed':
        if ('failure' in settlement.stored) throw failureFor(settlement.stored, chargeKey);
        return answerFromRecord({ ...record, state: 'completed', result: settlement.stored }, chargeKey, recheckAfterMs);
      case 'settling':
        return {
          ...settling,
          status: settlement.paymentIntent.status as SettlingCharge['status'],
          recheckAfterMs,
        };
    }
  }
}

/**
 * Asks Stripe where a settling PaymentIntent stands and records a final outcome under the charge
 * key. With `cancel`, a payment still settling is cancelled first; if Stripe refuses (it settled
 * meanwhile, or its method cannot be cancelled while processing), what it says now is recorded.
 * Shared by the settlement and by the refund, which must know whether money moved.
 */
export async function settleCharge(
  deps: ActivityDeps,
  request: { orderId: string; chargeKey: string; paymentIntentId: string; cancel: CancelSettling | null },
): Promise<Settlement> {
  const paymentIntent = await deps.stripe.paymentIntents.retrieve(request.paymentIntentId);
  const settled = await recordIfFinal(deps, request.orderId, request.chargeKey, paymentIntent);
  if (settled || request.cancel === null) return settled ?? { kind: 'settling', paymentIntent };

  let cancelled: Stripe.PaymentIntent;
  try {
    cancelled = await deps.stripe.paymentIntents.cancel(
      paymentIntent.id,
      { cancellation_reason: 'abandoned' },
      { idempotencyKey: request.cancel.idempotencyKey },
    );
  } catch (error) {
    if (classifyStripeError(error).kind === 'retryable') throw error;
    const now = await deps.stripe.paymentIntents.retrieve(paymentIntent.id);
    log.warn('could not cancel a settling payment; recording where it stands', { paymentIntentId: now.id, status: now.status });
    return (await recordIfFinal(deps, request.orderId, request.chargeKey, now)) ?? { kind: 'settling', paymentIntent: now };
  }
  const decline: DeclinedCharge = {
    failure: FailureType.PaymentDeclined,
    code: request.cancel.code,
    declineCode: null,
    paymentIntentId: cancelled.id,
  };
  return { kind: 'failed', stored: await recordDecline(deps, request.orderId, request.chargeKey, decline) };
}

/** Records a PaymentIntent that reached an outcome; null while it is still settling. */
async function recordIfFinal(
  deps: ActivityDeps,
  orderId: string,
  chargeKey: string,
  paymentIntent: Stripe.PaymentIntent,
): Promise<Settlement | null> {
  if (paymentIntent.status === 'succeeded') {
    return { kind: 'succeeded', result: await recordCharge(deps, orderId, chargeKey, paymentIntent) };
  }
  if (isSettling(paymentIntent.status)) return null;
  // Failed after processing (back to requires_payment_method with the reason), or cancelled.
  const error = paymentIntent.last_payment_error;
  const decline: DeclinedCharge = {
    failure: FailureType.PaymentDeclined,
    code: error?.code ?? (paymentIntent.status === 'canceled' ? 'payment_intent_canceled' : 'payment_failed'),
    declineCode: error?.decline_code ?? null,
    paymentIntentId: paymentIntent.id,
  };
  return { kind: 'failed', stored: await recordDecline(deps, orderId, chargeKey, decline) };
}

// The saga's frozen charge-first shape (charge, allocate, confirm), kept so executions started
// before the hold-then-capture change replay and finish on it.
import { ApplicationFailure, CancellationScope, CancelledFailure, condition, isCancellation, log, patched, proxyActivities } from '@temporalio/workflow';
import type { OrderActivities } from '../activities/index.js';
import type { ChargeOutcome, ChargeResult, PendingCharge } from '../activities/charge-first/types.js';
import { ActivityId, ChargeFirstActivityId } from '../domain/activity-ids.js';
import { FailureType } from '../domain/failures.js';
import type { OrderResult } from '../domain/order-result.js';
import { COMPENSATION_ACTIVITY_OPTIONS, FORWARD_ACTIVITY_OPTIONS, PAYMENT_ACTIVITY_OPTIONS, SETTLEMENT_ACTIVITY_OPTIONS } from './activity-options.js';
import { CompensationFailed, Compensations } from './compensations.js';
import { describeFailure, failureTypeOf } from './failure-type.js';
import { closeOrder, declineCodeOf } from './order-status.js';
import { CONFIRMED_ORDER_STAYS_CONFIRMED_PATCH } from './patches.js';
import type { SagaContext } from './saga-context.js';

/**
 * The charge-first shape: charge, then allocate stock, then confirm; refund on failure. It is how
 * the saga ran before the hold-then-capture change, and only executions that started then run it
 * (the `hold-then-capture` patch in order-payment-saga.ts decides). Its commands, activity types
 * and IDs are frozen: their recorded histories (test/fixtures/histories/charge-first/) must keep
 * replaying. Delete this file, the charge-first activities and the patch together once no such
 * execution is open.
 */

type ChargeFirstActivities = Pick<
  OrderActivities,
  'recordOrder' | 'chargePayment' | 'settlePayment' | 'allocateStock' | 'confirmOrder' | 'refundPayment' | 'recordRefund' | 'releaseStock' | 'setOrderStatus'
>;

const forward = proxyActivities<Pick<ChargeFirstActivities, 'recordOrder' | 'allocateStock' | 'confirmOrder'>>(FORWARD_ACTIVITY_OPTIONS);
const payments = proxyActivities<Pick<ChargeFirstActivities, 'chargePayment'>>(PAYMENT_ACTIVITY_OPTIONS);
const settlement = proxyActivities<Pick<ChargeFirstActivities, 'settlePayment'>>(SETTLEMENT_ACTIVITY_OPTIONS);
const compensation = proxyActivities<Pick<ChargeFirstActivities, 'refundPayment' | 'recordRefund' | 'releaseStock'>>(COMPENSATION_ACTIVITY_OPTIONS);

export async function chargeFirstSaga({ order, workflowId, originalRunId, saga, paymentEvents, keyOf }: SagaContext): Promise<OrderResult> {
  const compensations = new Compensations();

  try {
    saga.enter('recording-order');
    await forward.recordOrder.executeWithOptions(
      { activityId: ActivityId.recordOrder, summary: `Postgres: record order ${order.orderId}` },
      [{ order, workflowId }],
    );

    compensations.add('refund payment', async () => {
      const refund = await compensation.refundPayment.executeWithOptions(
        {
          activityId: ChargeFirstActivityId.refundPayment,
          summary: `Compensation · Stripe: refund the charge · key ${keyOf(ChargeFirstActivityId.refundPayment)}`,
        },
        [{ orderId: order.orderId, workflowId, originalRunId, chargeActivityId: ChargeFirstActivityId.chargePayment }],
      );
      saga.refunded(refund);
      await compensation.recordRefund.executeWithOptions(
        {
          activityId: ChargeFirstActivityId.recordRefund,
          summary: `Compensation · Postgres ledger: reverse the charge · key ${keyOf(ChargeFirstActivityId.recordRefund)}`,
        },
        [{ orderId: order.orderId, originalRunId, refund }],
      );
    });
    saga.enter('charging');
    const charged = await payments.chargePayment.executeWithOptions(
      {
        activityId: ChargeFirstActivityId.chargePayment,
        summary: `Stripe: charge ${order.amount} ${order.currency.toUpperCase()} (minor units) to customer ${order.customerId} · key ${keyOf(ChargeFirstActivityId.chargePayment)}`,
      },
      [{ order, workflowId, originalRunId }],
    );
    const charge =
      charged.status === 'succeeded'
        ? charged
        : await awaitSettlement(charged, {
            orderId: order.orderId,
            originalRunId,
            events: paymentEvents,
            onSettling: (pending) => {
              saga.awaitingPayment(pending);
            },
          });
    saga.charged(charge);

    compensations.add('release stock', async () => {
      await compensation.releaseStock.executeWithOptions(
        {
          activityId: ActivityId.releaseStock,
          summary: `Compensation · Postgres: release ${order.quantity} × ${order.sku} · key ${keyOf(ActivityId.releaseStock)}`,
        },
        [{ orderId: order.orderId, originalRunId, allocationActivityId: ChargeFirstActivityId.allocateStock }],
      );
    });
    saga.enter('allocating-stock');
    await forward.allocateStock.executeWithOptions(
      {
        activityId: ChargeFirstActivityId.allocateStock,
        summary: `Postgres: allocate ${order.quantity} × ${order.sku} · key ${keyOf(ChargeFirstActivityId.allocateStock)}`,
      },
      [{ orderId: order.orderId, sku: order.sku, quantity: order.quantity, originalRunId }],
    );
    saga.setStatus('allocated');

    saga.enter('confirming');
    await forward.confirmOrder.executeWithOptions(
      { activityId: ActivityId.confirmOrder, summary: `Postgres: confirm order ${order.orderId}` },
      [{ orderId: order.orderId }],
    );
    saga.finish('completed', null);
    return saga.result('completed');
  } catch (error) {
    const failureType = failureTypeOf(error);

    if (failureType === FailureType.PaymentDeclined) {
      // The charge key is recorded as failed: nothing was charged, nothing was allocated.
      const declineCode = declineCodeOf(error);
      saga.finish('declined', declineCode);
      await CancellationScope.nonCancellable(() => closeOrder(order.orderId, 'declined', declineCode));
      return saga.result('declined');
    }
    if (compensations.size === 0) throw error;

    const cancelled = isCancellation(error) || CancellationScope.current().consideredCancelled;
    const reason = cancelled ? 'cancelled' : describeFailure(error);
    log.warn('compensating order', { orderId: order.orderId, reason });
    const ended = await CancellationScope.nonCancellable(async () => {
      saga.enter('compensating');
      saga.setStatus('compensating');
      const marked = await closeOrder(order.orderId, 'compensating', reason, ActivityId.markCompensating);
      if (marked?.status === 'completed' && patched(CONFIRMED_ORDER_STAYS_CONFIRMED_PATCH)) {
        // Confirmed by an attempt the run never heard from: past undoing (see the patch).
        log.warn('not compensating: the order was already confirmed', { orderId: order.orderId, reason });
        saga.finish('completed', null);
        return 'completed' as const;
      }
      try {
        await compensations.runInReverse();
      } catch (compensationError) {
        const why = compensationError instanceof CompensationFailed ? compensationError.message : describeFailure(compensationError);
        saga.finish('needs_review', why);
        await closeOrder(order.orderId, 'needs_review', why);
        throw ApplicationFailure.nonRetryable(`order ${order.orderId} needs review: ${why}`, FailureType.NeedsReview, {
          orderId: order.orderId,
          reason: why,
        });
      }
      saga.finish('compensated', reason);
      await closeOrder(order.orderId, 'compensated', reason);
      return 'compensated' as const;
    });
    if (cancelled) throw isCancellation(error) ? error : new CancelledFailure(`order ${order.orderId} cancelled`);
    return saga.result(ended);
  }
}


interface SettlementWait {
  orderId: string;
  originalRunId: string;
  events: SagaContext['paymentEvents'];
  onSettling(pending: PendingCharge): void;
}

/**
 * The asynchronous branch of the charge: waits for the webhook's signal, at most `recheckAfterMs`,
 * then settles (with the signal, at once; without it, by asking Stripe); still settling, waits again.
 */
async function awaitSettlement(pending: PendingCharge, wait: SettlementWait): Promise<ChargeResult> {
  let outcome: ChargeOutcome = pending;
  let check = 0;
  while (outcome.status !== 'succeeded') {
    const settling: PendingCharge = outcome;
    wait.onSettling(settling);
    await condition(() => wait.events.endOf(settling.paymentIntentId) !== undefined, settling.recheckAfterMs);
    const event = wait.events.take(settling.paymentIntentId);
    check += 1;
    outcome = await settlement.settlePayment.executeWithOptions(
      {
        activityId: `${ChargeFirstActivityId.settlePayment}-${check}`,
        summary: event
          ? `Stripe: settle ${settling.paymentIntentId} after webhook ${event.type} (${event.eventId})`
          : `Stripe: no webhook within ${settling.recheckAfterMs} ms; ask for ${settling.paymentIntentId}`,
      },
      [
        {
          orderId: wait.orderId,
          originalRunId: wait.originalRunId,
          chargeActivityId: ChargeFirstActivityId.chargePayment,
          trigger: event ? { kind: 'webhook', eventId: event.eventId } : { kind: 'recheck' },
        },
      ],
    );
  }
  return outcome;
}

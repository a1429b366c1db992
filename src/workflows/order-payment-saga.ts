import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  defineQuery,
  isCancellation,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { OrderActivities } from '../activities/index.js';
import type { ChargeResult, PendingCharge, RefundResult } from '../activities/types.js';
import { ActivityId } from '../domain/activity-ids.js';
import { FailureType } from '../domain/failures.js';
import { parseOrderInput, type OrderInput } from '../domain/order-input.js';
import type { OrderResult, OrderStatus, SagaStatus, SagaStep } from '../domain/order-result.js';
import { deriveIdempotencyKey } from '../idempotency/idempotency-key.js';
import { OrderIdAttribute, OrderStatusAttribute } from '../temporal/search-attributes.js';
import { COMPENSATION_ACTIVITY_OPTIONS, FORWARD_ACTIVITY_OPTIONS, PAYMENT_ACTIVITY_OPTIONS } from './activity-options.js';
import { awaitSettlement, PaymentEvents } from './await-settlement.js';
import { CompensationFailed, Compensations } from './compensations.js';
import { describeFailure, failureDetailsOf, failureTypeOf } from './failure-type.js';
import { paymentEventSignal } from './signals.js';

export const statusQuery = defineQuery<SagaStatus>('status');

const forward = proxyActivities<OrderActivities>(FORWARD_ACTIVITY_OPTIONS);
const payments = proxyActivities<OrderActivities>(PAYMENT_ACTIVITY_OPTIONS);
const compensation = proxyActivities<OrderActivities>(COMPENSATION_ACTIVITY_OPTIONS);

/**
 * Charges the order, allocates its stock and confirms it; when a later step fails or the
 * workflow is cancelled, refunds, reverses the ledger and releases stock, newest first.
 */
export async function orderPaymentSaga(rawInput: unknown): Promise<OrderResult> {
  const parsed = parseOrderInput(rawInput);
  if (!parsed.ok) {
    throw ApplicationFailure.nonRetryable(`invalid order: ${parsed.problems.join('; ')}`, FailureType.InvalidOrderInput);
  }
  const order = parsed.value;
  const { workflowId, originalExecutionRunId: originalRunId } = workflowInfo();
  const saga = new SagaProgress(order.orderId);
  setHandler(statusQuery, () => saga.snapshot());
  // Stripe's webhooks, via the API. Recording one issues no command, so any run may receive them.
  const paymentEvents = new PaymentEvents();
  setHandler(paymentEventSignal, (event) => {
    paymentEvents.receive(event);
  });

  const keyOf = (activityId: string) => deriveIdempotencyKey({ runId: originalRunId, activityId });
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
          activityId: ActivityId.refundPayment,
          summary: `Compensation · Stripe: refund the charge · key ${keyOf(ActivityId.refundPayment)}`,
        },
        [{ orderId: order.orderId, workflowId, originalRunId, chargeActivityId: ActivityId.chargePayment }],
      );
      saga.refunded(refund);
      await compensation.recordRefund.executeWithOptions(
        {
          activityId: ActivityId.recordRefund,
          summary: `Compensation · Postgres ledger: reverse the charge · key ${keyOf(ActivityId.recordRefund)}`,
        },
        [{ orderId: order.orderId, originalRunId, refund }],
      );
    });
    saga.enter('charging');
    const charged = await payments.chargePayment.executeWithOptions(
      {
        activityId: ActivityId.chargePayment,
        summary: `Stripe: charge ${formatAmount(order)} · key ${keyOf(ActivityId.chargePayment)}`,
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
        [{ orderId: order.orderId, originalRunId, allocationActivityId: ActivityId.allocateStock }],
      );
    });
    saga.enter('allocating-stock');
    await forward.allocateStock.executeWithOptions(
      {
        activityId: ActivityId.allocateStock,
        summary: `Postgres: allocate ${order.quantity} × ${order.sku} · key ${keyOf(ActivityId.allocateStock)}`,
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
    if (compensations.size === 0) {
      // Nothing was attempted (the order record itself was refused): there is nothing to undo,
      // and the order row, if any, belongs to whoever recorded it first.
      throw error;
    }

    // A cancel that lands while an attempt is failing surfaces as that failure, not as a
    // CancelledFailure: the scope's state, not the error's type, says whether we were cancelled.
    const cancelled = isCancellation(error) || CancellationScope.current().consideredCancelled;
    const reason = cancelled ? 'cancelled' : describeFailure(error);
    log.warn('compensating order', { orderId: order.orderId, reason });
    await CancellationScope.nonCancellable(async () => {
      saga.enter('compensating');
      saga.setStatus('compensating');
      await closeOrder(order.orderId, 'compensating', reason, ActivityId.markCompensating);
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
    });
    // A cancelled workflow ends cancelled, with its compensations done.
    if (cancelled) throw isCancellation(error) ? error : new CancelledFailure(`order ${order.orderId} cancelled`);
    return saga.result('compensated');
  }
}

function closeOrder(
  orderId: string,
  status: 'compensating' | 'declined' | 'compensated' | 'needs_review',
  reason: string | null,
  activityId: string = ActivityId.closeOrder,
): Promise<void> {
  return compensation.setOrderStatus.executeWithOptions(
    { activityId, summary: `Postgres: mark order ${orderId} ${status}` },
    [{ orderId, status, reason }],
  );
}

function declineCodeOf(error: unknown): string {
  const [details] = failureDetailsOf(error) as [{ declineCode?: string | null; code?: string } | undefined];
  return details?.declineCode ?? details?.code ?? 'card_declined';
}

function formatAmount(order: OrderInput): string {
  return `${order.amount} ${order.currency.toUpperCase()} (minor units) to customer ${order.customerId}`;
}

/** The saga's position, mirrored to the status query, the search attributes and the UI. */
class SagaProgress {
  private step: SagaStep = 'validating';
  private status: OrderStatus = 'pending';
  private paymentIntentId: string | null = null;
  private refundId: string | null = null;
  private reason: string | null = null;

  constructor(private readonly orderId: string) {
    upsertSearchAttributes([
      { key: OrderIdAttribute, value: orderId },
      { key: OrderStatusAttribute, value: this.status },
    ]);
  }

  enter(step: SagaStep): void {
    this.step = step;
    setCurrentDetails(`**${step}** · order ${this.orderId} · status ${this.status}`);
  }

  setStatus(status: OrderStatus): void {
    this.status = status;
    upsertSearchAttributes([{ key: OrderStatusAttribute, value: status }]);
    setCurrentDetails(`**${this.step}** · order ${this.orderId} · status ${status}`);
  }

  awaitingPayment(pending: PendingCharge): void {
    this.paymentIntentId = pending.paymentIntentId;
    this.reason = `payment ${pending.status}`;
    this.enter('awaiting-payment');
  }

  charged(charge: ChargeResult): void {
    this.reason = null;
    this.paymentIntentId = charge.paymentIntentId;
    this.setStatus('paid');
  }

  refunded(refund: RefundResult): void {
    this.refundId = refund.refundId;
    this.paymentIntentId ??= refund.paymentIntentId;
  }

  finish(status: OrderStatus, reason: string | null): void {
    this.reason = reason;
    this.step = 'done';
    this.setStatus(status);
  }

  snapshot(): SagaStatus {
    return {
      step: this.step,
      orderStatus: this.status,
      paymentIntentId: this.paymentIntentId,
      refundId: this.refundId,
      reason: this.reason,
    };
  }

  result(status: OrderResult['status']): OrderResult {
    return {
      status,
      orderId: this.orderId,
      paymentIntentId: this.paymentIntentId,
      refundId: this.refundId,
      reason: this.reason,
    };
  }
}

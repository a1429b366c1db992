// The saga's current shape, hold then capture: its forward steps, their compensations and the
// payment's settlement, each role proxied with only its own activities and options.
import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  condition,
  isCancellation,
  log,
  proxyActivities,
  proxyLocalActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { OrderActivities } from '../activities/index.js';
import type { AuthorizationOutcome, Capture, HeldPayment, PendingAuthorization, VoidAuthorizationInput } from '../activities/types.js';
import { ActivityId } from '../domain/activity-ids.js';
import { FailureType } from '../domain/failures.js';
import type { OrderResult } from '../domain/order-result.js';
import {
  CAPTURE_ACTIVITY_OPTIONS,
  COMPENSATION_ACTIVITY_OPTIONS,
  PAYMENT_ACTIVITY_OPTIONS,
  POSTGRES_STEP_OPTIONS,
  SETTLEMENT_ACTIVITY_OPTIONS,
} from './activity-options.js';
import { CompensationFailed, Compensations } from './compensations.js';
import { describeFailure, failureDetailsOf, failureTypeOf } from './failure-type.js';
import { closeOrder, declineCodeOf } from './order-status.js';
import type { SagaContext } from './saga-context.js';
import { countCompensation, countSettlementWait } from './saga-metrics.js';

/*
 * Hold, then capture: the money flow payment teams ship.
 *
 *   record order + reserve stock ─► authorize (hold) ─► capture ─► confirm
 *                │                        │                 │
 *     release the reservation       void the hold      refund the capture
 *
 * The Postgres-only steps (the record with its reservation, the confirmation, the release and the
 * status moves) are local activities: they run inside the workflow task that reaches them, so a
 * completed order costs three workflow tasks (start, after the hold, after the capture). The
 * Stripe calls are ordinary activities, with their own retries, heartbeats and timeouts.
 *
 * Each undo is registered before its step runs (a step whose outcome is unknown may have
 * happened) and each resolves what its step really did before undoing it. They run newest first,
 * so a failure after the capture refunds, and a failure before it only voids: a void is free,
 * while Stripe keeps its fee on a refund. The stock is reserved before the card is touched, so an
 * order that cannot be filled never reaches Stripe at all.
 */

/** The steps that have an undo, in the order the saga takes them; their undos run the other way. */
const UNDO_STEPS = ['release', 'void', 'refund'] as const;
type UndoStep = (typeof UNDO_STEPS)[number];

// Each role sees only its own activities, with its own options.
const postgres = proxyLocalActivities<Pick<OrderActivities, 'recordOrderAndReserveStock' | 'confirmOrder' | 'releaseStock'>>(POSTGRES_STEP_OPTIONS);
const authorization = proxyActivities<Pick<OrderActivities, 'authorizePayment'>>(PAYMENT_ACTIVITY_OPTIONS);
const settlement = proxyActivities<Pick<OrderActivities, 'settleAuthorization'>>(SETTLEMENT_ACTIVITY_OPTIONS);
const capture = proxyActivities<Pick<OrderActivities, 'capturePayment'>>(CAPTURE_ACTIVITY_OPTIONS);
const compensation = proxyActivities<Pick<OrderActivities, 'voidAuthorization' | 'refundCapture'>>(COMPENSATION_ACTIVITY_OPTIONS);

export async function holdThenCaptureSaga(context: SagaContext): Promise<OrderResult> {
  const { order, workflowId, originalRunId, saga, keyOf } = context;
  const compensations = new Compensations();
  // Why a hold is released, set when compensation begins; Stripe's cancellation_reason follows it.
  let voidReason: VoidAuthorizationInput['reason'] = 'failed';

  // The undo of each step, in step order. Each resolves what its step really did (from the
  // step's key, made from the original run ID) and undoes only that, so it is safe to run for a
  // step that never happened.
  const undos: Record<UndoStep, { name: string; run: () => Promise<void> }> = {
    release: {
      name: 'release the reservation',
      run: async () => {
        const { released } = await postgres.releaseStock.executeWithOptions(
          {
            summary: `Compensation · Postgres: release order ${order.orderId}'s reservation · key ${keyOf(ActivityId.releaseStock)}`,
          },
          [{ orderId: order.orderId, originalRunId, allocationActivityId: ActivityId.reserveStock, stepId: ActivityId.releaseStock }],
        );
        if (released > 0) countCompensation('release');
      },
    },
    void: {
      name: 'void the hold',
      run: async () => {
        const voided = await compensation.voidAuthorization.executeWithOptions(
          {
            activityId: ActivityId.voidAuthorization,
            summary: `Compensation · Stripe: void the hold (free) · key ${keyOf(ActivityId.voidAuthorization)}`,
          },
          [
            {
              orderId: order.orderId,
              workflowId,
              originalRunId,
              authorizationActivityId: ActivityId.authorizePayment,
              captureActivityId: ActivityId.capturePayment,
              reason: voidReason,
            },
          ],
        );
        if (voided.outcome === 'voided') countCompensation('void');
      },
    },
    refund: {
      name: 'refund the capture',
      run: async () => {
        const refund = await compensation.refundCapture.executeWithOptions(
          {
            activityId: ActivityId.refundCapture,
            summary: `Compensation · Stripe + ledger: refund what was captured · key ${keyOf(ActivityId.refundCapture)}`,
          },
          [{ orderId: order.orderId, workflowId, originalRunId, authorizationActivityId: ActivityId.authorizePayment, captureActivityId: ActivityId.capturePayment }],
        );
        saga.refunded(refund);
        if (refund.refundId !== null) countCompensation('refund');
      },
    },
  };
  const registered = new Set<UndoStep>();
  const registerUndo = (step: UndoStep) => {
    if (registered.has(step)) return;
    registered.add(step);
    compensations.add(undos[step].name, undos[step].run);
  };

  try {
    // The release is registered first: a step whose outcome is unknown may have reserved.
    registerUndo('release');
    saga.enter('recording-order');
    try {
      await postgres.recordOrderAndReserveStock.executeWithOptions(
        {
          summary: `Postgres: record order ${order.orderId} and reserve its stock · key ${keyOf(ActivityId.reserveStock)}`,
        },
        [{ order, workflowId, originalRunId, stepId: ActivityId.reserveStock }],
      );
    } catch (error) {
      // The order ID is another order's: nothing was written, and its row and stock are not ours
      // to release or close.
      if (isOrderIdTaken(error)) {
        compensations.discardLast();
        registered.delete('release');
      }
      throw error;
    }
    saga.setStatus('reserved');

    registerUndo('void');
    saga.enter('authorizing');
    const authorized = await authorization.authorizePayment.executeWithOptions(
      {
        activityId: ActivityId.authorizePayment,
        summary: `Stripe: hold order ${order.orderId}'s payment · key ${keyOf(ActivityId.authorizePayment)}`,
      },
      [{ order, workflowId, originalRunId }],
    );
    const hold = authorized.status === 'requires_capture' ? authorized : await awaitAuthorization(authorized, context);
    saga.authorized(hold.paymentIntentId);

    registerUndo('refund');
    saga.enter('capturing');
    const captured = await captureBeforeDeadline(hold, () =>
      capture.capturePayment.executeWithOptions(
        {
          activityId: ActivityId.capturePayment,
          summary: `Stripe + ledger: capture order ${order.orderId}'s hold · key ${keyOf(ActivityId.capturePayment)}`,
        },
        [{ orderId: order.orderId, workflowId, originalRunId, hold }],
      ),
    );
    saga.charged(captured);

    saga.enter('confirming');
    await postgres.confirmOrder.executeWithOptions({ summary: `Postgres: confirm order ${order.orderId}` }, [{ orderId: order.orderId }]);
    saga.finish('completed', null);
    return saga.result('completed');
  } catch (error) {
    // A reset run starts again from its reset point, but the run before it may have gone further:
    // reserved, held, even captured, under the same keys. Cancelled or failing before it reaches
    // those steps itself, it still undoes them: every undo not yet registered is registered now,
    // in step order (each finds nothing to undo for a step nobody took).
    const resetRun = workflowInfo().runId !== originalRunId;
    if (resetRun) for (const step of UNDO_STEPS) registerUndo(step);
    if (compensations.size === 0) {
      // The order record itself was refused (its ID belongs to another order): nothing of ours
      // to undo, and the row belongs to whoever recorded it first.
      if (!isCancellation(error) && !CancellationScope.current().consideredCancelled) throw error;
      // Cancelled while the record was being written: it may have landed, so it is closed, and
      // an order whose record never landed stays unrecorded (the update matches no row).
      await CancellationScope.nonCancellable(async () => {
        await closeOrder(order.orderId, 'compensating', 'cancelled');
        saga.finish('compensated', 'cancelled');
        await closeOrder(order.orderId, 'compensated', 'cancelled');
      });
      throw isCancellation(error) ? error : new CancelledFailure(`order ${order.orderId} cancelled`);
    }
    const failureType = failureTypeOf(error);
    if (failureType === FailureType.PaymentDeclined) {
      // The authorization key holds the decline and the order is declined; nothing is held at
      // Stripe. What was reserved goes back, and the order ends as the decline it is.
      const declineCode = declineCodeOf(error);
      saga.decided({ status: 'declined', declineCode });
      await CancellationScope.nonCancellable(async () => {
        await undo(compensations, saga, order.orderId, 'failed');
        saga.finish('declined', declineCode);
        await closeOrder(order.orderId, 'declined', declineCode);
      });
      return saga.result('declined');
    }
    if (failureType === FailureType.OutOfStock) saga.decided({ status: 'out_of_stock' });

    // A cancel that lands while an attempt is failing surfaces as that failure, not as a
    // CancelledFailure: the scope's state, not the error's type, says whether we were cancelled.
    const cancelled = isCancellation(error) || CancellationScope.current().consideredCancelled;
    const reason = cancelled ? 'cancelled' : describeFailure(error);
    voidReason = cancelled ? 'cancelled' : failureType === FailureType.AuthorizationExpired ? 'expired' : 'failed';
    log.warn('compensating order', { orderId: order.orderId, reason });
    const ended = await CancellationScope.nonCancellable(async () => {
      saga.enter('compensating');
      saga.setStatus('compensating');
      const marked = await closeOrder(order.orderId, 'compensating', reason);
      if (marked?.status === 'completed') {
        // The order is confirmed: by the run before a reset, or by this run's own confirmation,
        // whose attempt committed and was never heard from (its worker died, and the cancel
        // stopped the retry). It is past undoing: taking back its stock or money would contradict
        // it. A confirmed order is refunded by the merchant refund, never by a compensation.
        log.warn('not compensating: the order was already confirmed', { orderId: order.orderId, reason });
        saga.finish('completed', null);
        return 'completed' as const;
      }
      await undo(compensations, saga, order.orderId, reason);
      saga.finish('compensated', reason);
      await closeOrder(order.orderId, 'compensated', reason);
      return 'compensated' as const;
    });
    // A cancelled workflow ends cancelled, with its compensations done.
    if (cancelled) throw isCancellation(error) ? error : new CancelledFailure(`order ${order.orderId} cancelled`);
    return saga.result(ended);
  }
}

/** The record was refused: the order ID is already another order's (IdempotencyConflict, scope order). */
function isOrderIdTaken(error: unknown): boolean {
  const [details] = failureDetailsOf(error) as [{ scope?: string } | undefined];
  return failureTypeOf(error) === FailureType.IdempotencyConflict && details?.scope === 'order';
}

/**
 * Runs the compensations newest first. One that fails for good stops the sequence (nothing is
 * undone out of order) and ends the order in needs_review, with the reason a person will read.
 */
async function undo(compensations: Compensations, saga: SagaContext['saga'], orderId: string, reason: string): Promise<void> {
  try {
    await compensations.runInReverse();
  } catch (compensationError) {
    const why = compensationError instanceof CompensationFailed ? compensationError.message : describeFailure(compensationError);
    saga.finish('needs_review', why);
    await closeOrder(orderId, 'needs_review', why);
    throw ApplicationFailure.nonRetryable(`order ${orderId} needs review: ${why} (while undoing: ${reason})`, FailureType.NeedsReview, {
      orderId,
      reason: why,
    });
  }
}

/**
 * Captures before the hold lapses, with no timer of its own: every attempt of the capture checks
 * the hold's capture deadline (`capture_before` less the worker's margin) before it calls Stripe,
 * and past it fails with AuthorizationExpired, so the saga voids the hold and compensates. The
 * capture retries for as long as it takes until then; an attempt that began before the deadline
 * and captures is kept: the money is there, and the order completes.
 */
async function captureBeforeDeadline(hold: HeldPayment, run: () => Promise<Capture>): Promise<Capture> {
  if (hold.captureWithinMs <= 0) {
    throw ApplicationFailure.nonRetryable(`hold ${hold.paymentIntentId} reached its capture deadline before the capture began`, FailureType.AuthorizationExpired);
  }
  return run();
}

/**
 * The asynchronous branch of the authorization: the customer must authenticate, or the method
 * settles later. Waits for the webhook's signal, at most `recheckAfterMs`, then settles: with the
 * signal, at once; without it, by asking Stripe (so a lost webhook costs time, never money).
 * Still settling: waits again. The settlement records under the authorization's key, so however
 * often it runs the hold is recorded once; a failure or an expiry is thrown as a decline.
 */
async function awaitAuthorization(pending: PendingAuthorization, { order, originalRunId, saga, paymentEvents }: SagaContext): Promise<HeldPayment> {
  let outcome: AuthorizationOutcome = pending;
  let check = 0;
  while (outcome.status !== 'requires_capture') {
    const settling: PendingAuthorization = outcome;
    saga.awaitingPayment(settling);
    await condition(() => paymentEvents.endOf(settling.paymentIntentId) !== undefined, settling.recheckAfterMs);
    const event = paymentEvents.take(settling.paymentIntentId);
    countSettlementWait(event ? 'webhook' : 'recheck');
    check += 1;
    outcome = await settlement.settleAuthorization.executeWithOptions(
      {
        activityId: `${ActivityId.settleAuthorization}-${check}`,
        summary: event
          ? `Stripe: settle order ${order.orderId}'s authorization after webhook ${event.type}`
          : `Stripe: no webhook within ${settling.recheckAfterMs} ms; ask Stripe about order ${order.orderId}'s authorization`,
      },
      [
        {
          orderId: order.orderId,
          originalRunId,
          authorizationActivityId: ActivityId.authorizePayment,
          trigger: event ? { kind: 'webhook', eventId: event.eventId } : { kind: 'recheck' },
        },
      ],
    );
  }
  return outcome;
}


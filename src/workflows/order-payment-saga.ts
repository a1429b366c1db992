// The order-payment saga workflow: validates the order, wires its status query, payment-event
// signal and outcome update, and runs hold-then-capture.
import { allHandlersFinished, ApplicationFailure, CancellationScope, condition, setHandler, workflowInfo } from '@temporalio/workflow';
import { FailureType } from '../domain/failures.js';
import { parseOrderInput, sameOrder } from '../domain/order-input.js';
import type { OrderResult, PaymentOutcome } from '../domain/order-result.js';
import { deriveIdempotencyKey } from '../money/idempotency/idempotency-key.js';
import { holdThenCaptureSaga } from './hold-then-capture.js';
import { paymentEventSignal, paymentOutcomeUpdate, statusQuery } from './messages.js';
import { PaymentEvents } from './payment-events.js';
import { SagaProgress } from './saga-progress.js';

/**
 * PINNED (the worker's default, src/platform/temporal/worker-deployment.ts): a run finishes on the
 * build that started it, so a change to the saga's commands ships as a new worker build, rolled
 * out with `npm run deploy` (docs/deploying.md), and never as a patch branch in the workflow code.
 *
 * Takes an order through a hold on the customer's card, its stock and the capture: reserves the
 * stock, authorizes the payment (a hold, captured later), captures last and confirms. When a step
 * fails or the workflow is cancelled, compensates newest first: refunds what was captured, voids
 * a hold nothing captured (which costs nothing), releases the reservation.
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
  // The checkout's one call: answered once the authorization's outcome is known.
  setHandler(
    paymentOutcomeUpdate,
    async (): Promise<PaymentOutcome> => {
      await condition(() => saga.paymentOutcome !== null);
      return saga.paymentOutcome as PaymentOutcome;
    },
    {
      validator: (request) => {
        const asked = parseOrderInput(request);
        if (!asked.ok) throw ApplicationFailure.nonRetryable(`invalid order: ${asked.problems.join('; ')}`, FailureType.InvalidOrderInput);
        if (!sameOrder(asked.value, order)) {
          throw ApplicationFailure.nonRetryable(
            `order ID '${order.orderId}' is already used by a different order; nothing was applied`,
            FailureType.OrderIdConflict,
          );
        }
      },
    },
  );

  const context = {
    order,
    workflowId,
    originalRunId,
    saga,
    paymentEvents,
    keyOf: (activityId: string) => deriveIdempotencyKey({ runId: originalRunId, activityId }),
  };
  try {
    return await holdThenCaptureSaga(context);
  } catch (error) {
    // The run fails (needs_review, a conflict): whoever waits for the outcome is told so.
    saga.failedBeforeOutcome(error instanceof Error ? error.message : String(error));
    throw error;
  } finally {
    // The checkout's update is answered before the run closes, never cut off by it; shielded
    // from a cancel, which the saga has already turned into its compensations and result.
    await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
  }
}

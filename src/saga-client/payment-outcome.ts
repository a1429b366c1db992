// The checkout's one call for the API and the starter: Update-with-Start of the order's saga,
// answering with the authorization's outcome as soon as it is known, or null after a wait.
import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../domain/failures.js';
import type { OrderInput } from '../domain/order-input.js';
import { workflowIdForOrder } from '../domain/order-input.js';
import type { PaymentOutcome } from '../domain/order-result.js';
import { paymentOutcomeUpdate, statusQuery, type orderPaymentSaga } from '../workflows/index.js';
import { assertSameOrder, describeIfExists, OrderIdConflictError, orderStartOptions, startOrder } from './start-order.js';

export interface PaymentOutcomeRequest {
  /**
   * Names this request's update: a retried request with the same ID attaches to the update
   * already running (or answered) instead of running a second one.
   */
  updateId: string;
  /** How long to wait for the outcome before answering without it. */
  waitMs: number;
}

export interface OrderWithOutcome {
  workflowId: string;
  /** The order's run (one per order ID); `describe()` names its run ID. */
  handle: WorkflowHandle<typeof orderPaymentSaga>;
  /** The authorization's outcome, or null when it was not known within `waitMs`. */
  payment: PaymentOutcome | null;
}

/**
 * The checkout's one call, on Update-with-Start: starts the order's workflow or attaches to its
 * running run (USE_EXISTING; a finished run is never started again), and in the same request
 * runs the `paymentOutcome` update, which answers as soon as the authorization is known while
 * the saga goes on to capture and confirm. The update's validator refuses an order that is not
 * the run's before anything enters its history (OrderIdConflictError here).
 *
 * When `waitMs` runs out the order is still certainly started (a plain idempotent start makes
 * sure of it) and `payment` is null; asking again with the same update ID picks the same update
 * up. A finished order answers from its status query, and a run that closed while the update
 * waited the same way.
 */
export async function startOrderForPaymentOutcome(
  client: Client,
  taskQueue: string,
  order: OrderInput,
  request: PaymentOutcomeRequest,
): Promise<OrderWithOutcome> {
  const startOperation = new WithStartWorkflowOperation<typeof orderPaymentSaga>('orderPaymentSaga', orderStartOptions(taskQueue, order));
  const budget = AbortSignal.timeout(request.waitMs);
  const workflowId = workflowIdForOrder(order.orderId);
  try {
    // One round trip: the server answers once the update has completed.
    const payment = await client.withAbortSignal(budget, () =>
      client.workflow.executeUpdateWithStart(paymentOutcomeUpdate, { args: [order], updateId: request.updateId, startWorkflowOperation: startOperation }),
    );
    // One run per order ID (REJECT_DUPLICATE), so the workflow ID names it.
    return { workflowId, handle: client.workflow.getHandle<typeof orderPaymentSaga>(workflowId), payment };
  } catch (error) {
    const refusal = error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure ? error.cause : null;
    if (refusal?.type === FailureType.OrderIdConflict) throw new OrderIdConflictError(order.orderId);
    if (refusal?.type === FailureType.InvalidOrderInput) throw new Error(refusal.message);
    if (error instanceof WorkflowExecutionAlreadyStartedError || error instanceof WorkflowUpdateFailedError) {
      // The run had finished before this request (REJECT_DUPLICATE), or closed while the update waited.
      return finishedOrder(client, order);
    }
    if (!budget.aborted) throw error;
    // Out of time: the outcome is not known yet, but the order must be certainly started.
    const started = await startOrder(client, taskQueue, order);
    return { workflowId: started.workflowId, handle: started.handle, payment: null };
  }
}

async function finishedOrder(client: Client, order: OrderInput): Promise<OrderWithOutcome> {
  const workflowId = workflowIdForOrder(order.orderId);
  const run = await describeIfExists(client, workflowId);
  if (!run) throw new Error(`the workflow of order ${order.orderId} was reported started but cannot be found`);
  await assertSameOrder(client, workflowId, run.runId, order);
  const handle = client.workflow.getHandle<typeof orderPaymentSaga>(workflowId, run.runId);
  const status = await handle.query(statusQuery);
  return { workflowId, handle, payment: status.paymentOutcome ?? null };
}

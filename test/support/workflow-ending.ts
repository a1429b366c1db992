// Test support: tells how a cancelled run ended, cancelled or compensated and returned.
import { CancelledFailure, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { OrderResult } from '../../src/domain/order-result.js';
import type { orderPaymentSaga } from '../../src/workflows/index.js';

export type SagaEnding = { ended: 'cancelled' } | { ended: 'returned'; result: OrderResult };

/**
 * How a run the test cancelled ended. A cancel that reaches an activity between attempts
 * cancels it and the run ends cancelled; one that reaches it mid-attempt lets the attempt
 * finish, and if that attempt failed the saga compensates for the failure and returns. Either
 * way the order is compensated; any other failure is rethrown.
 */
export async function endingOf(handle: WorkflowHandle<typeof orderPaymentSaga>): Promise<SagaEnding> {
  try {
    return { ended: 'returned', result: await handle.result() };
  } catch (error) {
    if (error instanceof WorkflowFailedError && error.cause instanceof CancelledFailure) return { ended: 'cancelled' };
    throw error;
  }
}

// Hands a recorded `charge.dispute.*` webhook to its dispute's workflow (Signal-With-Start, so the
// first webhook of a dispute, whichever it is, starts the run and every later one wakes it), and a
// `radar.early_fraud_warning.created` to its warning's workflow (started once).
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { PaymentEvent } from '../../domain/payment-event.js';
import type { DisputeSettings } from '../../platform/config/settings.js';
import { disputeEventSignal, disputeWorkflowId } from '../../workflows/dispute-messages.js';
import type { orderDispute } from '../../workflows/order-dispute.js';
import { fraudWarningWorkflowId, type orderFraudWarning } from '../../workflows/order-fraud-warning.js';
import type { SignalPaymentEvent } from './workflow-handoff.js';

/** The webhook types that concern a dispute's workflow. */
export function isDisputeEvent(type: string): boolean {
  return type.startsWith('charge.dispute.');
}

/**
 * Signals the dispute's workflow, starting it if need be. A dispute that already closed (its run
 * completed) is not started again: the reuse policy refuses, and the hand-off is done. A run
 * that failed may be started again by the next webhook; its ledger entries are booked once by
 * their Stripe objects.
 */
export function disputeSignaller(client: Client, options: { taskQueue: string; settings: DisputeSettings; timeoutMs?: number }): SignalPaymentEvent {
  const timeoutMs = options.timeoutMs ?? 5_000;
  return async (disputeId, event: PaymentEvent) => {
    try {
      await client.withDeadline(Date.now() + timeoutMs, () =>
        client.workflow.signalWithStart<typeof orderDispute, [{ eventId: string; type: string }]>('orderDispute', {
          workflowId: disputeWorkflowId(disputeId),
          taskQueue: options.taskQueue,
          args: [{ disputeId, ...options.settings }],
          signal: disputeEventSignal,
          signalArgs: [{ eventId: event.eventId, type: event.type }],
          workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
          // The dispute only: safe to show where nothing decodes (docs/encryption.md).
          staticSummary: `Dispute ${disputeId}`,
        }),
      );
      return 'signalled';
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return 'no-workflow';
      throw error;
    }
  };
}

export const EARLY_FRAUD_WARNING_CREATED = 'radar.early_fraud_warning.created';

/**
 * Starts the warning's workflow once: a duplicate webhook while it runs attaches to it, and one
 * after it closed is refused by the reuse policy, so the warning is acted on once.
 */
export function fraudWarningStarter(client: Client, options: { taskQueue: string; policy: 'refund' | 'ignore'; timeoutMs?: number }): SignalPaymentEvent {
  const timeoutMs = options.timeoutMs ?? 5_000;
  return async (warningId) => {
    try {
      await client.withDeadline(Date.now() + timeoutMs, () =>
        client.workflow.start<typeof orderFraudWarning>('orderFraudWarning', {
          workflowId: fraudWarningWorkflowId(warningId),
          taskQueue: options.taskQueue,
          args: [{ warningId, policy: options.policy }],
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          staticSummary: `Early fraud warning ${warningId}`,
        }),
      );
      return 'signalled';
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return 'no-workflow';
      throw error;
    }
  };
}

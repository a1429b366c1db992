// The dispute workflow: one per Stripe dispute, from the first webhook that names it to its
// close, booking what it moved and keeping its evidence deadline on a durable timer.
import { allHandlersFinished, ApplicationFailure, condition, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { OrderActivities } from '../activities/index.js';
import type { DisputeView } from '../activities/disputes.js';
import type { DisputeCloser } from '../money/payments/dispute-protocol.js';
import { ActivityId } from '../domain/activity-ids.js';
import { COMPENSATION_ACTIVITY_OPTIONS } from './activity-options.js';
import { acceptDisputeUpdate, disputeEventSignal, disputeStatusQuery, evidenceProblem, submitEvidenceUpdate, type EvidenceSubmission } from './dispute-messages.js';

/** What to do when the evidence deadline comes with no evidence submitted. */
export type DisputeDeadlinePolicy = 'accept' | 'lose';

export interface OrderDisputeInput {
  disputeId: string;
  /** `accept`: close the dispute (lost, but on our terms and recorded so); `lose`: leave it to lose by default. */
  deadlinePolicy: DisputeDeadlinePolicy;
  /** How long before the deadline `order.dispute_evidence_due` is announced. */
  reminderLeadMs: number;
  /** How long before Stripe's `due_by` the policy acts: Stripe takes nothing after it. */
  policyLeadMs: number;
  /** How often the dispute is read again when nothing wakes the workflow: covers a lost webhook. */
  resyncMs: number;
}

// Every step retries until Stripe and the database answer; only a final refusal stops one.
const disputes = proxyActivities<Pick<OrderActivities, 'syncDispute' | 'submitDisputeEvidence' | 'acceptDispute' | 'announceDisputeEvidenceDue'>>(
  COMPENSATION_ACTIVITY_OPTIONS,
);

/**
 * `order-dispute-<dispute ID>`, started (or signalled) by the API for every `charge.dispute.*`
 * webhook it records. Each wake-up reads the dispute from Stripe and records it, so the books
 * follow Stripe's state, never the webhooks' order. Until the dispute closes it waits for the
 * next webhook, the merchant (evidence, acceptance), the reminder, the deadline, or a periodic
 * re-read. Its history holds IDs, statuses and the merchant's evidence (encrypted by the codec),
 * never the customer's card or identity.
 */
export async function orderDispute(input: OrderDisputeInput): Promise<DisputeView> {
  const { originalExecutionRunId: originalRunId } = workflowInfo();
  let view = null as DisputeView | null;
  let wakeUps = 0;
  let reads = 0;
  let submissions = 0;
  let closer: DisputeCloser | null = null;
  let reminded = false;

  const sync = async (): Promise<DisputeView> => {
    reads += 1;
    view = await disputes.syncDispute.executeWithOptions(
      { activityId: `${ActivityId.syncDispute}-${reads}`, summary: `Stripe + ledger: read and book dispute ${input.disputeId}` },
      [{ disputeId: input.disputeId, originalRunId, closer }],
    );
    return view;
  };

  // The merchant's acceptance and the deadline policy's are one step: one key, accepted once.
  const accept = (summary: string) =>
    disputes.acceptDispute.executeWithOptions({ activityId: ActivityId.acceptDispute, summary }, [{ disputeId: input.disputeId, originalRunId }]);

  setHandler(disputeEventSignal, () => {
    wakeUps += 1;
  });
  setHandler(disputeStatusQuery, () => view);
  setHandler(
    submitEvidenceUpdate,
    async (submission) => {
      submissions += 1;
      await disputes.submitDisputeEvidence.executeWithOptions(
        { activityId: `${ActivityId.submitDisputeEvidence}-${submissions}`, summary: `Stripe: evidence for dispute ${input.disputeId}` },
        [{ disputeId: input.disputeId, originalRunId, submission: submissions, evidence: submission.evidence, submit: submission.submit }],
      );
      return sync();
    },
    {
      validator: (submission: EvidenceSubmission) => {
        const problem = evidenceProblem(submission);
        if (problem) throw ApplicationFailure.nonRetryable(problem, 'InvalidEvidence');
        if (view?.closed) throw ApplicationFailure.nonRetryable(`dispute ${input.disputeId} is closed (${view.outcome ?? view.status})`, 'DisputeClosed');
      },
    },
  );
  setHandler(
    acceptDisputeUpdate,
    async () => {
      closer = 'merchant';
      await accept(`Stripe: accept dispute ${input.disputeId}`);
      return sync();
    },
    {
      validator: () => {
        if (view?.closed) throw ApplicationFailure.nonRetryable(`dispute ${input.disputeId} is closed (${view.outcome ?? view.status})`, 'DisputeClosed');
      },
    },
  );

  // The waits come from the activity's clock (the dispute's read time beside Stripe's due_by), so
  // the workflow needs no clock of its own: a wait that ends reads the dispute again, and the
  // fresh read says which milestone has come.
  let current = await sync();
  while (!current.closed) {
    const waiting = current.dueByMs !== null && !current.evidenceSubmitted && closer === null;
    const dueBy = current.dueByMs ?? 0;
    const untilAct = waiting ? dueBy - input.policyLeadMs - current.readAtMs : Number.POSITIVE_INFINITY;
    const untilReminder = waiting && !reminded ? dueBy - input.reminderLeadMs - current.readAtMs : Number.POSITIVE_INFINITY;
    if (untilAct <= 0) {
      if (input.deadlinePolicy === 'accept') {
        closer = 'deadline_policy';
        await accept(`Stripe: accept dispute ${input.disputeId} at its deadline`);
      } else {
        // Nothing to send: Stripe closes it lost once due_by passes; its webhook (or a re-read) closes ours.
        closer = 'left_to_lose';
      }
      current = await sync();
      continue;
    }
    if (untilReminder <= 0) {
      reminded = true;
      await disputes.announceDisputeEvidenceDue.executeWithOptions(
        { activityId: ActivityId.announceEvidenceDue, summary: `Outbox: evidence due for dispute ${input.disputeId}` },
        [{ disputeId: input.disputeId }],
      );
      continue;
    }
    const seen = wakeUps;
    const before = current;
    await condition(() => wakeUps !== seen || view !== before, Math.max(1, Math.min(untilAct, untilReminder, input.resyncMs)));
    // An update's own read is the newest; otherwise (a webhook, or a wait that ended) read again.
    current = view !== null && view !== before ? view : await sync();
  }
  // An evidence or acceptance update still running answers its caller before the run ends.
  await condition(allHandlersFinished);
  return view ?? current;
}

// The dispute workflow's signal (Stripe's dispute webhooks), updates (the merchant's evidence and
// acceptance) and query, shared by the workflow and its callers.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { DisputeEvidence, DisputeView } from '../activities/disputes.js';

/** A recorded `charge.dispute.*` webhook: only a wake-up, since the workflow reads the dispute from Stripe. */
export interface DisputeEventNotice {
  eventId: string;
  type: string;
}

export const disputeEventSignal = defineSignal<[DisputeEventNotice]>('disputeEvent');

/** The merchant's evidence; `submit` sends it for decision (Stripe takes no more after that). */
export interface EvidenceSubmission {
  evidence: DisputeEvidence;
  submit: boolean;
}

export const submitEvidenceUpdate = defineUpdate<DisputeView, [EvidenceSubmission]>('submitEvidence');
export const acceptDisputeUpdate = defineUpdate<DisputeView>('acceptDispute');
export const disputeStatusQuery = defineQuery<DisputeView | null>('disputeStatus');

export const DISPUTE_WORKFLOW_PREFIX = 'order-dispute-';

/** One workflow per Stripe dispute, so every duplicate webhook lands on the same run. */
export function disputeWorkflowId(disputeId: string): string {
  return `${DISPUTE_WORKFLOW_PREFIX}${disputeId}`;
}

/** Stripe's limit on all of a dispute's evidence text together, and ours on one field. */
export const MAX_EVIDENCE_CHARACTERS = 150_000;
export const MAX_EVIDENCE_FIELD_CHARACTERS = 20_000;

/** Why a submission is refused before anything enters the history, or null. */
export function evidenceProblem(submission: EvidenceSubmission): string | null {
  const values = Object.values(submission.evidence).filter((value): value is string => typeof value === 'string');
  if (values.length === 0 && !submission.submit) return 'no evidence given';
  const long = Object.entries(submission.evidence).find(([, value]) => typeof value === 'string' && value.length > MAX_EVIDENCE_FIELD_CHARACTERS);
  if (long) return `evidence.${long[0]} is longer than ${MAX_EVIDENCE_FIELD_CHARACTERS} characters`;
  const total = values.reduce((sum, value) => sum + value.length, 0);
  if (total > MAX_EVIDENCE_CHARACTERS) return `the evidence is ${total} characters together; Stripe takes at most ${MAX_EVIDENCE_CHARACTERS}`;
  return null;
}

// Disputes (chargebacks and inquiries): one opens after a dispute test card's charge is captured,
// with the withdrawal Stripe books; the Disputes API (retrieve, list, evidence and submission,
// close); the decision (by the evidence's test text or the control API); closing past `due_by`.
import type Stripe from 'stripe';
import type { Endpoint } from './endpoint.js';
import { invalidRequest, resourceMissing, type ApiError } from './errors.js';
import { NO_REQUEST, type EventRequest } from './events.js';
import { newId } from './ids.js';
import { paginate } from './pagination.js';
import { readBoolean, readHash, readMetadata, readString, rejectUnknownParams, type FormParams } from './params.js';
import type { DisputeTrigger } from './payment-methods.js';
import { newestFirst, type AccountState } from './store.js';

/** Stripe's dispute fee, withdrawn with the disputed amount (in the currency's minor unit). */
export const DISPUTE_FEE = 1_500;

/** How long the merchant has to respond: `evidence_details.due_by` is this far after the dispute opened. */
export const DISPUTE_RESPONSE_WINDOW_SECONDS = 7 * 24 * 60 * 60;

/** Stripe's test-mode convention: submitted evidence with this `uncategorized_text` decides the dispute at once. */
const WINNING_EVIDENCE = 'winning_evidence';
const LOSING_EVIDENCE = 'losing_evidence';

/** The text (or file ID) fields of Stripe's dispute evidence, all settable through the API. */
const EVIDENCE_FIELDS = [
  'access_activity_log',
  'billing_address',
  'cancellation_policy',
  'cancellation_policy_disclosure',
  'cancellation_rebuttal',
  'customer_communication',
  'customer_email_address',
  'customer_name',
  'customer_purchase_ip',
  'customer_signature',
  'duplicate_charge_documentation',
  'duplicate_charge_explanation',
  'duplicate_charge_id',
  'product_description',
  'receipt',
  'refund_policy',
  'refund_policy_disclosure',
  'refund_refusal_explanation',
  'service_date',
  'service_documentation',
  'shipping_address',
  'shipping_carrier',
  'shipping_date',
  'shipping_documentation',
  'shipping_tracking_number',
  'uncategorized_file',
  'uncategorized_text',
] as const satisfies readonly (keyof Stripe.Dispute.Evidence)[];

type EvidenceField = (typeof EVIDENCE_FIELDS)[number];
type EvidenceUpdate = Partial<Record<EvidenceField, string | null>>;

/** Stripe's limit on all evidence text together. */
const MAX_EVIDENCE_CHARACTERS = 150_000;

/** Waiting for the merchant's response; these can go past due. */
const RESPONDABLE: readonly Stripe.Dispute.Status[] = ['needs_response', 'warning_needs_response'];
/** Not decided yet: evidence submitted, or still awaited. */
const OPEN: readonly Stripe.Dispute.Status[] = [...RESPONDABLE, 'under_review', 'warning_under_review'];

/** Visa's reason codes for the reasons the test cards give. */
const NETWORK_REASON_CODES: Readonly<Record<DisputeTrigger['reason'], string>> = {
  fraudulent: '10.4',
  product_not_received: '13.1',
};

export type DisputeOutcome = 'won' | 'lost';

function isInquiry(dispute: Stripe.Dispute): boolean {
  return dispute.payment_method_details?.card?.case_type === 'inquiry';
}

function isOpen(dispute: Stripe.Dispute): boolean {
  return OPEN.includes(dispute.status);
}

function emptyEvidence(): Stripe.Dispute.Evidence {
  const evidence = Object.fromEntries(EVIDENCE_FIELDS.map((field) => [field, null])) as Record<EvidenceField, null>;
  return { ...evidence, enhanced_evidence: {} };
}

/**
 * A dispute's entry in the balance: the withdrawal when it opens (the amount and the fee), or the
 * reinstatement when it is won (the amount; the fee stays withdrawn).
 */
function balanceTransaction(
  dispute: Pick<Stripe.Dispute, 'id' | 'amount' | 'currency' | 'charge'>,
  kind: 'withdrawal' | 'reinstatement',
  now: number,
): Stripe.BalanceTransaction {
  const withdrawal = kind === 'withdrawal';
  const amount = withdrawal ? -dispute.amount : dispute.amount;
  const fee = withdrawal ? DISPUTE_FEE : 0;
  const chargeId = typeof dispute.charge === 'string' ? dispute.charge : dispute.charge.id;
  return {
    id: newId('txn'),
    object: 'balance_transaction',
    amount,
    available_on: now,
    balance_type: 'payments',
    created: now,
    currency: dispute.currency,
    description: withdrawal ? `Chargeback withdrawal for ${chargeId}` : `Chargeback reversal for ${chargeId}`,
    exchange_rate: null,
    fee,
    fee_details: withdrawal ? [{ amount: fee, application: null, currency: dispute.currency, description: 'Dispute fee', type: 'stripe_fee' }] : [],
    net: amount - fee,
    reporting_category: withdrawal ? 'dispute' : 'dispute_reversal',
    source: dispute.id,
    status: 'available',
    type: 'adjustment',
  };
}

/**
 * Opens the dispute a test card asks for on its captured charge, as the cardholder's bank would:
 * `charge.dispute.created`, and for a chargeback (not an inquiry) the withdrawal of the amount and
 * the fee with `charge.dispute.funds_withdrawn`. Raised by Stripe, so the events carry no request.
 */
export function openDispute(account: AccountState, charge: Stripe.Charge, trigger: DisputeTrigger, now: number): Stripe.Dispute {
  const brand = charge.payment_method_details?.card?.brand ?? 'visa';
  const networkReasonCode = NETWORK_REASON_CODES[trigger.reason];
  const dispute: Stripe.Dispute = {
    id: newId('dp'),
    object: 'dispute',
    amount: charge.amount_captured,
    balance_transactions: [],
    charge: charge.id,
    created: now,
    currency: charge.currency,
    enhanced_eligibility_types: [],
    evidence: emptyEvidence(),
    evidence_details: {
      due_by: now + DISPUTE_RESPONSE_WINDOW_SECONDS,
      enhanced_eligibility: {},
      has_evidence: false,
      past_due: false,
      submission_count: 0,
      submission_method: 'not_submitted',
    },
    intended_submission_method: null,
    // An inquiry took no money yet, so the charge can still be refunded; a chargeback already did.
    is_charge_refundable: trigger.inquiry,
    livemode: false,
    metadata: {},
    network_reason_code: networkReasonCode,
    payment_intent: typeof charge.payment_intent === 'string' ? charge.payment_intent : null,
    payment_method_details: {
      card: { brand, case_type: trigger.inquiry ? 'inquiry' : 'chargeback', network: brand, network_reason_code: networkReasonCode },
      type: 'card',
    },
    reason: trigger.reason,
    status: trigger.inquiry ? 'warning_needs_response' : 'needs_response',
  };
  if (!trigger.inquiry) dispute.balance_transactions.push(balanceTransaction(dispute, 'withdrawal', now));
  account.disputes.set(dispute.id, dispute);
  account.respondableDisputes.add(dispute.id);
  charge.disputed = true;
  account.events.record('charge.dispute.created', dispute, now, NO_REQUEST);
  if (!trigger.inquiry) account.events.record('charge.dispute.funds_withdrawn', dispute, now, NO_REQUEST);
  return dispute;
}

/**
 * Closes a dispute with its final status: `charge.dispute.closed`, and for a won chargeback the
 * reinstatement of the amount with `charge.dispute.funds_reinstated`.
 */
function finishDispute(
  account: AccountState,
  dispute: Stripe.Dispute,
  status: DisputeOutcome | 'warning_closed',
  now: number,
  request: EventRequest,
): void {
  dispute.status = status;
  account.respondableDisputes.delete(dispute.id);
  const reinstated = status === 'won' && !isInquiry(dispute);
  if (reinstated) dispute.balance_transactions.push(balanceTransaction(dispute, 'reinstatement', now));
  account.events.record('charge.dispute.closed', dispute, now, request);
  if (reinstated) account.events.record('charge.dispute.funds_reinstated', dispute, now, request);
}

/**
 * The issuer's decision on an open dispute (the control API's `decide`): won or lost, whatever
 * its evidence. False if the dispute is already closed.
 */
export function decideOpenDispute(account: AccountState, dispute: Stripe.Dispute, outcome: DisputeOutcome, now: number): boolean {
  if (!isOpen(dispute)) return false;
  finishDispute(account, dispute, outcome, now, NO_REQUEST);
  return true;
}

/**
 * Closes every dispute still waiting for a response once the clock is past its `due_by`, as
 * Stripe does: a chargeback is lost, an inquiry closes as `warning_closed`, both `past_due`.
 * Called before each request and after the clock moves, as holds lapse (holds.ts).
 */
export function closePastDueDisputes(account: AccountState, nowSeconds: number): number {
  let closed = 0;
  for (const id of [...account.respondableDisputes]) {
    const dispute = account.disputes.get(id);
    if (!dispute || !RESPONDABLE.includes(dispute.status)) {
      account.respondableDisputes.delete(id);
      continue;
    }
    const dueBy = dispute.evidence_details.due_by;
    if (dueBy === null || nowSeconds <= dueBy) continue;
    dispute.evidence_details.past_due = true;
    finishDispute(account, dispute, isInquiry(dispute) ? 'warning_closed' : 'lost', dueBy, NO_REQUEST);
    closed += 1;
  }
  return closed;
}

/**
 * Stripe refuses to refund a charged-back charge: the bank already returned the money (or holds
 * it while the dispute is open). An inquiry took nothing, and a won dispute gave it back.
 */
export function refuseRefundIfDisputed(account: AccountState, charge: Stripe.Charge): void {
  for (const dispute of account.disputes.values()) {
    if (dispute.charge !== charge.id || isInquiry(dispute) || dispute.status === 'won') continue;
    throw invalidRequest(`Charge ${charge.id} has been charged back; it cannot be refunded (dispute ${dispute.id} is ${dispute.status}).`, {
      param: 'charge',
      code: 'charge_disputed',
    });
  }
}

function findDispute(account: AccountState, id: string): Stripe.Dispute {
  const dispute = account.disputes.get(id);
  if (!dispute) throw resourceMissing('dispute', id, 'dispute', 404);
  return dispute;
}

function readEvidence(params: FormParams): EvidenceUpdate | undefined {
  const hash = readHash(params, 'evidence');
  if (hash === undefined) return undefined;
  rejectUnknownParams(
    Object.fromEntries(Object.entries(hash).map(([key, value]) => [`evidence[${key}]`, value])),
    EVIDENCE_FIELDS.map((field) => `evidence[${field}]`),
    ['evidence[enhanced_evidence]', 'evidence[appeal]'],
  );
  const update: EvidenceUpdate = {};
  for (const field of EVIDENCE_FIELDS) {
    const value = readString(hash, field, `evidence[${field}]`);
    // An empty string clears a field, as with metadata.
    if (value !== undefined) update[field] = value === '' ? null : value;
  }
  return update;
}

/** Metadata as an update: merged into what is there; an empty value (or `metadata=''`) unsets. */
function readMetadataUpdate(params: FormParams): { set: Record<string, string>; unset: string[] | 'all' } | undefined {
  if (params.metadata === undefined) return undefined;
  if (params.metadata === '') return { set: {}, unset: 'all' };
  const set = readMetadata(params);
  const hash = readHash(params, 'metadata') ?? {};
  return { set, unset: Object.keys(hash).filter((key) => hash[key] === '') };
}

function evidenceLength(evidence: Stripe.Dispute.Evidence): number {
  return EVIDENCE_FIELDS.reduce((total, field) => {
    const value = evidence[field];
    return total + (typeof value === 'string' ? value.length : 0);
  }, 0);
}

function alreadyClosed(dispute: Stripe.Dispute): ApiError {
  return invalidRequest(`This dispute is already closed (status ${dispute.status}): its evidence can no longer be updated or submitted.`, {
    param: 'evidence',
  });
}

function alreadySubmitted(dispute: Stripe.Dispute): ApiError {
  return invalidRequest(`This dispute's evidence has already been submitted (status ${dispute.status}) and can no longer be changed.`, {
    param: 'evidence',
  });
}

/** The fields of `after` whose values differ from `before`, as they were in `before`. */
function changed<T extends object>(before: T, after: T): Partial<T> {
  const previous: Partial<T> = {};
  for (const key of Object.keys(after) as (keyof T)[]) {
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) previous[key] = before[key];
  }
  return previous;
}

export const retrieveDispute: Endpoint = {
  method: 'GET',
  path: '/v1/disputes/:id',
  prepare(ctx) {
    rejectUnknownParams(ctx.params, [], ['expand']);
    const dispute = findDispute(ctx.account, ctx.pathParams.id ?? '');
    return () => dispute;
  },
};

export const listDisputes: Endpoint = {
  method: 'GET',
  path: '/v1/disputes',
  prepare(ctx) {
    rejectUnknownParams(ctx.params, ['charge', 'payment_intent', 'limit', 'starting_after', 'ending_before'], ['created', 'expand']);
    const chargeId = readString(ctx.params, 'charge');
    const paymentIntentId = readString(ctx.params, 'payment_intent');
    return () => {
      const matching = newestFirst(ctx.account.disputes).filter(
        (dispute) =>
          (chargeId === undefined || dispute.charge === chargeId) &&
          (paymentIntentId === undefined || dispute.payment_intent === paymentIntentId),
      );
      return paginate(matching, ctx.params, '/v1/disputes', 'dispute');
    };
  },
};

/**
 * Saves evidence and metadata, and with `submit=true` submits the evidence: the dispute goes under
 * review (`charge.dispute.updated`). Submitted `winning_evidence` or `losing_evidence` (as
 * `uncategorized_text`) decides it at once, as in Stripe's test mode; anything else waits for the
 * control API's decision. Evidence cannot change once submitted or closed; metadata always can.
 */
export const updateDispute: Endpoint = {
  method: 'POST',
  path: '/v1/disputes/:id',
  prepare(ctx) {
    const { params } = ctx;
    rejectUnknownParams(params, ['evidence', 'metadata', 'submit'], ['expand', 'intended_submission_method']);
    const id = ctx.pathParams.id ?? '';
    findDispute(ctx.account, id);
    const evidence = readEvidence(params);
    const metadata = readMetadataUpdate(params);
    const submit = readBoolean(params, 'submit') ?? false;
    return () => {
      const dispute = findDispute(ctx.account, id);
      const touchesEvidence = submit || (evidence !== undefined && Object.keys(evidence).length > 0);
      if (touchesEvidence && !isOpen(dispute)) throw alreadyClosed(dispute);
      if (touchesEvidence && !RESPONDABLE.includes(dispute.status)) throw alreadySubmitted(dispute);
      const nextEvidence: Stripe.Dispute.Evidence = { ...dispute.evidence, ...evidence };
      if (evidenceLength(nextEvidence) > MAX_EVIDENCE_CHARACTERS) {
        throw invalidRequest(`The evidence can have at most ${MAX_EVIDENCE_CHARACTERS} characters in all.`, { param: 'evidence' });
      }
      const before = structuredClone(dispute);
      dispute.evidence = nextEvidence;
      dispute.evidence_details.has_evidence = EVIDENCE_FIELDS.some((field) => nextEvidence[field] !== null);
      if (metadata !== undefined) {
        const kept = metadata.unset === 'all' ? {} : Object.fromEntries(Object.entries(dispute.metadata).filter(([key]) => !metadata.unset.includes(key)));
        dispute.metadata = { ...kept, ...metadata.set };
      }
      if (submit) {
        dispute.evidence_details.submission_count += 1;
        dispute.evidence_details.submission_method = 'manual';
        dispute.status = isInquiry(dispute) ? 'warning_under_review' : 'under_review';
        ctx.account.respondableDisputes.delete(dispute.id);
      }
      const request = { requestId: ctx.requestId, idempotencyKey: ctx.idempotencyKey };
      const now = ctx.clock.nowSeconds();
      const previous = changed(before, dispute);
      if (Object.keys(previous).length > 0) {
        const previousAttributes: Record<string, unknown> = { ...previous };
        if (previous.evidence) previousAttributes.evidence = changed(before.evidence, dispute.evidence);
        if (previous.evidence_details) previousAttributes.evidence_details = changed(before.evidence_details, dispute.evidence_details);
        ctx.account.events.record('charge.dispute.updated', dispute, now, request, previousAttributes);
      }
      if (submit && dispute.evidence.uncategorized_text === WINNING_EVIDENCE) finishDispute(ctx.account, dispute, 'won', now, request);
      if (submit && dispute.evidence.uncategorized_text === LOSING_EVIDENCE) finishDispute(ctx.account, dispute, 'lost', now, request);
      return structuredClone(dispute);
    };
  },
};

/**
 * Accepts the dispute: a chargeback is lost (its withdrawal stands), an inquiry closes as
 * `warning_closed`. Closing is irreversible; closing a closed dispute is a 400.
 */
export const closeDispute: Endpoint = {
  method: 'POST',
  path: '/v1/disputes/:id/close',
  prepare(ctx) {
    rejectUnknownParams(ctx.params, [], ['expand']);
    const id = ctx.pathParams.id ?? '';
    findDispute(ctx.account, id);
    return () => {
      const dispute = findDispute(ctx.account, id);
      if (!isOpen(dispute)) throw invalidRequest(`This dispute is already closed (status ${dispute.status}).`);
      const request = { requestId: ctx.requestId, idempotencyKey: ctx.idempotencyKey };
      finishDispute(ctx.account, dispute, isInquiry(dispute) ? 'warning_closed' : 'lost', ctx.clock.nowSeconds(), request);
      return structuredClone(dispute);
    };
  },
};

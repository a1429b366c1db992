// The merchant's side of a dispute: read it, submit evidence, accept it. Evidence and acceptance
// are Temporal updates on the dispute's workflow, each under the request's Idempotency-Key.
import { randomBytes } from 'node:crypto';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DISPUTE_EVIDENCE_FIELDS } from '../../activities/disputes.js';
import { readDispute, type DisputeRecord } from '../../money/payments/dispute-protocol.js';
import { requestHash } from '../../money/idempotency/request-hash.js';
import {
  acceptDisputeUpdate,
  disputeWorkflowId,
  MAX_EVIDENCE_CHARACTERS,
  MAX_EVIDENCE_FIELD_CHARACTERS,
  submitEvidenceUpdate,
} from '../../workflows/dispute-messages.js';
import type { TenantIdempotencyKey } from '../idempotency/api-idempotency-store.js';
import { startUnderIdempotencyKey, type ApiAnswer, type StartResult } from '../idempotency/idempotent-start.js';
import { callerOf, checkCaller, idempotencyScopeOf } from './caller-checks.js';
import type { CreateOrderDeps } from './create-order.js';
import { errorBodySchema, idempotentPostHeaders, orderIdParams } from './order-contract.js';
import { findApiOrder } from './api-orders.js';

export const SUBMIT_EVIDENCE_OPERATION = 'dispute.evidence';
export const ACCEPT_DISPUTE_OPERATION = 'dispute.accept';

const disputeParams = z.object({
  id: orderIdParams.shape.id,
  disputeId: z.string().min(1).max(64).meta({ description: 'The Stripe Dispute (dp_...)' }),
});

/** Evidence in Stripe's field names, each at most 20,000 characters and all together at most Stripe's 150,000. */
export const evidenceRequestSchema = z
  .object({
    evidence: z
      .object(Object.fromEntries(DISPUTE_EVIDENCE_FIELDS.map((field) => [field, z.string().min(1).max(MAX_EVIDENCE_FIELD_CHARACTERS).optional()])))
      .strict()
      .meta({ description: 'Evidence fields in Stripe’s names (product_description, uncategorized_text, shipping_tracking_number, ...)' }),
    submit: z.boolean().default(false).meta({ description: 'true sends the evidence for decision; Stripe takes no more after that' }),
  })
  .strict()
  .superRefine((body, context) => {
    const total = Object.values(body.evidence).reduce((sum: number, value) => sum + (typeof value === 'string' ? value.length : 0), 0);
    if (total > MAX_EVIDENCE_CHARACTERS) context.addIssue({ code: 'custom', path: ['evidence'], message: `${total} characters together; at most ${MAX_EVIDENCE_CHARACTERS}` });
    if (total === 0 && !body.submit) context.addIssue({ code: 'custom', path: ['evidence'], message: 'give at least one evidence field, or submit' });
  })
  .meta({ id: 'DisputeEvidenceRequest' });

export const disputeViewSchema = z
  .looseObject({
    id: z.string(),
    object: z.literal('dispute'),
    orderId: z.string(),
    amount: z.number().int(),
    currency: z.string(),
    reason: z.string(),
    status: z.string().meta({ description: 'Stripe’s: needs_response, under_review, won, lost, or warning_* for an inquiry' }),
    isInquiry: z.boolean(),
    evidenceDueBy: z.string().nullable(),
    evidenceSubmitted: z.boolean(),
    outcome: z.string().nullable().meta({ description: 'Once closed: won, lost, accepted, accepted_at_deadline, expired or closed' }),
    openedAt: z.string(),
    closedAt: z.string().nullable(),
  })
  .meta({ id: 'Dispute' });

export function disputeView(record: DisputeRecord) {
  return {
    id: record.disputeId,
    object: 'dispute' as const,
    orderId: record.orderId,
    amount: record.amount,
    currency: record.currency,
    reason: record.reason,
    status: record.status,
    isInquiry: record.isInquiry,
    evidenceDueBy: record.evidenceDueBy?.toISOString() ?? null,
    evidenceSubmitted: record.evidenceSubmitted,
    outcome: record.outcome,
    openedAt: record.openedAt.toISOString(),
    closedAt: record.closedAt?.toISOString() ?? null,
  };
}

const error = (description: string) => errorBodySchema.meta({ description });
const bearer = [{ apiKey: [] }];

const notFound = (disputeId: string) => ({ error: 'dispute_not_found', message: `no dispute '${disputeId}' of this order for this API key's tenant` });

/** The dispute, if it is of this order and the order is the tenant's. */
async function tenantDispute(deps: CreateOrderDeps, tenantId: string, orderId: string, disputeId: string): Promise<DisputeRecord | null> {
  const order = await findApiOrder(deps.db, tenantId, orderId);
  if (!order) return null;
  const dispute = await readDispute(deps.db, disputeId);
  return dispute && dispute.orderId === orderId ? dispute : null;
}

/**
 * Runs one update on the dispute's workflow under the Idempotency-Key: the key's resource ID is
 * the update's ID, so a retry after a lost answer attaches to the same update instead of sending
 * the evidence twice. Stripe's or the workflow's refusal is final and stored; a transient failure
 * is not.
 */
function runUpdateUnderKey(
  deps: CreateOrderDeps,
  scope: TenantIdempotencyKey,
  dispute: DisputeRecord,
  request: { requestHash: string; resourceType: string; resourcePrefix: string },
  update: (handle: WorkflowHandle, updateId: string) => Promise<unknown>,
): Promise<ApiAnswer> {
  const start = async (resourceId: string): Promise<StartResult> => {
    try {
      await update(deps.temporal.client.workflow.getHandle(disputeWorkflowId(dispute.disputeId)), resourceId);
    } catch (failure) {
      if (failure instanceof WorkflowNotFoundError) {
        return { store: false, answer: { statusCode: 409, body: { error: 'dispute_closed', message: `dispute '${dispute.disputeId}' is closed; nothing was sent` } } };
      }
      if (failure instanceof WorkflowUpdateFailedError) {
        const message = failure.cause instanceof Error ? failure.cause.message : failure.message;
        return { store: 'failed', statusCode: 409, body: { error: 'dispute_not_updated', message: `${message}; nothing was sent` } };
      }
      throw failure;
    }
    const current = await readDispute(deps.db, dispute.disputeId);
    return { store: 'completed', statusCode: 200, body: disputeView(current ?? dispute) };
  };
  return startUnderIdempotencyKey({ db: deps.db, settings: deps.idempotency }, scope, {
    requestHash: request.requestHash,
    resourceType: request.resourceType,
    proposedResourceId: `${request.resourcePrefix}_${randomBytes(12).toString('base64url')}`,
    inUseRetryAdvice: 'retry',
    start,
  });
}

/** GET, evidence and accept, on the orders plugin (its bearer auth, rate limits and error answers). */
export function registerDisputeRoutes(plugin: FastifyInstance, deps: CreateOrderDeps, send: (reply: FastifyReply, answer: ApiAnswer) => FastifyReply): void {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const responses = {
    200: disputeViewSchema,
    404: error('No such dispute of this order for this API key’s tenant'),
    401: error('Missing, unknown, revoked or expired API key'),
    403: error('The API key lacks the scope this route needs'),
    429: error('Over the rate limit'),
    503: error('Temporarily unavailable: retry the same request'),
  };
  const postResponses = {
    ...responses,
    400: error('Invalid Idempotency-Key or body (see problems); nothing was sent'),
    409: error('The dispute is closed, Stripe refused the update, or the key is in use; nothing was sent'),
    413: error('The body is larger than the limit'),
    415: error('The body is not application/json'),
    422: error('The key was already used for a different request; nothing was applied'),
  };

  app.get(
    '/v1/orders/:id/disputes/:disputeId',
    {
      config: { scope: 'read' },
      preHandler: checkCaller({ idempotencyKey: false }),
      schema: { summary: 'Read a dispute of an order', tags: ['disputes'], security: bearer, params: disputeParams, response: responses },
    },
    async (request, reply) => {
      const dispute = await tenantDispute(deps, callerOf(request).tenantId, request.params.id, request.params.disputeId);
      if (!dispute) return reply.code(404).send(notFound(request.params.disputeId));
      return disputeView(dispute);
    },
  );

  app.post(
    '/v1/orders/:id/disputes/:disputeId/evidence',
    {
      bodyLimit: 256 * 1024,
      config: { scope: 'disputes:write' },
      preHandler: checkCaller({ idempotencyKey: true }),
      schema: {
        summary: 'Send evidence for a dispute, and submit it for decision',
        tags: ['disputes'],
        security: bearer,
        headers: idempotentPostHeaders,
        params: disputeParams,
        body: evidenceRequestSchema,
        response: postResponses,
      },
    },
    async (request, reply) => {
      const scope = idempotencyScopeOf(request, SUBMIT_EVIDENCE_OPERATION);
      const dispute = await tenantDispute(deps, scope.tenantId, request.params.id, request.params.disputeId);
      if (!dispute) return reply.code(404).send(notFound(request.params.disputeId));
      const body = request.body;
      const evidence = Object.fromEntries(Object.entries(body.evidence).filter(([, value]) => typeof value === 'string')) as Record<string, string>;
      const answer = await runUpdateUnderKey(
        deps,
        scope,
        dispute,
        { requestHash: requestHash({ disputeId: dispute.disputeId, evidence, submit: body.submit }), resourceType: 'dispute_evidence', resourcePrefix: 'dev' },
        (handle, updateId) => handle.executeUpdate(submitEvidenceUpdate, { updateId, args: [{ evidence, submit: body.submit }] }),
      );
      return send(reply, answer);
    },
  );

  app.post(
    '/v1/orders/:id/disputes/:disputeId/accept',
    {
      bodyLimit: 1024,
      config: { scope: 'disputes:write' },
      preHandler: checkCaller({ idempotencyKey: true }),
      schema: {
        summary: 'Accept a dispute: it closes lost, and no evidence is sent',
        tags: ['disputes'],
        security: bearer,
        headers: idempotentPostHeaders,
        params: disputeParams,
        response: postResponses,
      },
    },
    async (request, reply) => {
      const scope = idempotencyScopeOf(request, ACCEPT_DISPUTE_OPERATION);
      const dispute = await tenantDispute(deps, scope.tenantId, request.params.id, request.params.disputeId);
      if (!dispute) return reply.code(404).send(notFound(request.params.disputeId));
      const answer = await runUpdateUnderKey(
        deps,
        scope,
        dispute,
        { requestHash: requestHash({ disputeId: dispute.disputeId }), resourceType: 'dispute_acceptance', resourcePrefix: 'dac' },
        (handle, updateId) => handle.executeUpdate(acceptDisputeUpdate, { updateId, args: [] }),
      );
      return send(reply, answer);
    },
  );
}

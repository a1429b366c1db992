// The orders API's contract in zod: request bodies, Idempotency-Key header, answers, and the
// error responses of each route.
import { z } from 'zod';
import { IDEMPOTENCY_KEY_CONTRACT } from '../idempotency/idempotency-key-header.js';
import { STRIPE_CURRENCIES } from '../../domain/currencies.js';
import { MAX_AMOUNT_MINOR, orderInputSchema, refuseBelowStripeMinimum } from '../../domain/order-input.js';

/**
 * The orders API's contract, in zod: the same schemas validate requests (through
 * fastify-type-provider-zod) and are the OpenAPI document served at /openapi.json.
 */

/**
 * The request body: the order input without its ID, which the server assigns, and without its
 * tenant, which is the API key's; unknown fields (a `tenantId` among them) are refused.
 */
export const orderRequestSchema = orderInputSchema
  .omit({ orderId: true, tenantId: true })
  .extend({
    // The same check, documented as the list it checks against (any letter case is accepted).
    currency: orderInputSchema.shape.currency.meta({
      description: 'A three-letter ISO 4217 code that Stripe supports, in any letter case',
      enum: [...STRIPE_CURRENCIES].sort(),
      example: 'usd',
    }),
  })
  .strict()
  .superRefine(refuseBelowStripeMinimum)
  .meta({ id: 'OrderRequest' });

/** A refund request: omit `amount` to refund the whole order. */
export const refundRequestSchema = z
  .object({
    amount: z
      .number({ error: 'amount must be a number of minor units (e.g. 500 for 5.00)' })
      .int('amount must be a whole number of minor units')
      .positive('amount must be positive')
      .max(MAX_AMOUNT_MINOR)
      .optional(),
  })
  .strict()
  .meta({ id: 'RefundRequest' });

/**
 * Headers of an idempotent POST, as the OpenAPI document states them. The orders routes check the
 * key with parseIdempotencyKeyHeader in their checkCaller preHandler (caller-checks.ts), which
 * accepts exactly what this schema does. Other headers pass through untouched.
 */
export const idempotentPostHeaders = z.looseObject({
  'idempotency-key': z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x21-\x7E]+$/)
    .meta({ description: `Names this intent. ${IDEMPOTENCY_KEY_CONTRACT}.`, example: '8e03978e-40d5-43e8-bc93-6894a57f9324' }),
});

export const orderIdParams = z.object({ id: z.string().min(1).max(64).meta({ description: 'The order ID the API assigned (ord_...)' }) });

export const errorBodySchema = z
  .looseObject({
    error: z.string().meta({ description: 'A stable machine-readable code, e.g. invalid_order, idempotency_key_reused, rate_limited' }),
    message: z.string().meta({ description: 'What was wrong and how to fix it' }),
    problems: z.array(z.string()).optional().meta({ description: 'Each invalid field and why (validation errors)' }),
    resourceType: z.string().nullable().optional(),
    resourceId: z.string().nullable().optional(),
  })
  .meta({ id: 'Error' });

const orderFields = {
  id: z.string().meta({ example: 'ord_2Jm6x0cY3qkQn1vVh6QK1b8W' }),
  object: z.literal('order'),
  amount: z.number().int(),
  currency: z.string(),
  customerId: z.string(),
  paymentMethod: z.string(),
  sku: z.string(),
  quantity: z.number().int(),
  workflowId: z.string().meta({ description: 'The order’s workflow in Temporal' }),
};

/** What POST /v1/orders answers: the payment's outcome, or pending when it was not known in time. */
export const orderAnswerSchema = z
  .looseObject({
    ...orderFields,
    status: z.enum(['authorized', 'requires_action', 'declined', 'out_of_stock', 'failed', 'pending']).meta({
      description:
        'The payment outcome: authorized (the hold is placed; the order is captured and confirmed next), requires_action (the ' +
        'customer must act, see nextAction), declined (see declineCode; nothing charged), out_of_stock (nothing charged), failed ' +
        '(the order ended before an outcome, see failureReason), or pending (202 only: not known within API_OUTCOME_WAIT_MS)',
    }),
    paymentIntentId: z.string().optional(),
    nextAction: z.record(z.string(), z.unknown()).nullable().optional().meta({ description: 'Stripe’s next_action, with requires_action' }),
    declineCode: z.string().optional().meta({ description: 'Stripe’s decline code, with declined' }),
    failureReason: z.string().optional(),
  })
  .meta({ id: 'OrderAnswer' });

export const refundIdParams = z.object({ id: z.string().min(1).max(64).meta({ description: 'The refund request ID the API assigned (rfd_...)' }) });

export const orderRefundParams = z.object({
  id: orderIdParams.shape.id,
  refundId: refundIdParams.shape.id,
});

const refundRequestFields = {
  id: z.string().meta({ description: 'The refund request ID (rfd_...)', example: 'rfd_Jm6x0cY3qkQn1vVh6QK1b8W4' }),
  object: z.literal('refund'),
  orderId: z.string(),
  amount: z.number().int(),
  currency: z.string(),
  status: z.enum(['pending', 'succeeded', 'failed']).meta({
    description: 'pending (the refund is being made), succeeded (see stripeRefundId) or failed (see failureReason; nothing was refunded)',
  }),
  stripeRefundId: z.string().nullable().meta({ description: 'The Stripe Refund, once succeeded' }),
  failureReason: z.string().nullable().meta({ description: 'Why the refund was not made, once failed' }),
  createdAt: z.string(),
  updatedAt: z.string(),
};

/** An order's refund request, as its view lists it. */
const refundRequestItemSchema = z.object(refundRequestFields).meta({ id: 'RefundRequestItem' });

/** GET /v1/orders/:id: the order as its tenant sees it now. */
export const orderViewSchema = z
  .looseObject({
    ...orderFields,
    status: z.string().meta({ description: 'pending, reserved, authorized, paid, completed, declined, compensating, compensated or needs_review' }),
    statusReason: z.string().nullable(),
    stripe: z.object({ paymentIntentId: z.string().nullable(), refundId: z.string().nullable() }),
    refunds: z
      .array(z.object({ stripeRefundId: z.string(), amount: z.number().int(), currency: z.string(), createdAt: z.string() }))
      .meta({ description: 'Every refund the ledger booked: the saga’s compensation or the merchant’s' }),
    amountRefunded: z.number().int(),
    refundRequests: z.array(refundRequestItemSchema).meta({ description: 'The merchant’s refund requests, oldest first, each with its status' }),
    disputes: z.array(z.looseObject({ id: z.string(), status: z.string(), outcome: z.string().nullable() })).meta({
      description: 'Disputes of the order’s charge (see GET /v1/orders/{id}/disputes/{disputeId} for each one whole)',
    }),
    createdAt: z.string(),
  })
  .meta({ id: 'OrderView' });

/** A refund request, as POST answers it (pending, or where a retried request stands) and the GETs read it. */
export const refundAnswerSchema = z
  .looseObject({ ...refundRequestFields, workflowId: z.string().meta({ description: 'The refund’s workflow in Temporal' }) })
  .meta({ id: 'RefundAnswer' });


const error = (description: string) => errorBodySchema.meta({ description });

/** Responses every authenticated route can give. */
const commonErrors = {
  401: error('Missing, unknown, revoked or expired API key (Authorization: Bearer <key>)'),
  403: error('The API key lacks the scope this route needs (insufficient_scope: orders:write, refunds:write or read)'),
  429: error('Over the client address’s or the tenant’s rate limit: retry after Retry-After seconds; the request was not stored under its Idempotency-Key'),
  503: error('Temporarily unavailable: retry the same request with the same Idempotency-Key after Retry-After seconds'),
};

/** Responses of an idempotent POST, besides its success. */
const idempotentPostErrors = {
  ...commonErrors,
  400: error('Invalid Idempotency-Key, malformed JSON or an invalid body (see problems); nothing was started'),
  409: error(
    'The key is in use by a request still running (retry after Retry-After), or its stored response has expired ' +
      '(idempotency_key_expired, naming the resource it created); nothing new was started',
  ),
  413: error('The body is larger than the limit'),
  415: error('The body is not application/json'),
  422: error('The key was already used for a different request; nothing was applied'),
};

export const createOrderResponses = {
  201: orderAnswerSchema.meta({ description: 'The order and its payment outcome. A replay carries Idempotent-Replayed: true' }),
  202: orderAnswerSchema.meta({
    description: 'The order is started but its outcome was not known in time: the same request again answers 201 once it is',
  }),
  ...idempotentPostErrors,
};

export const getOrderResponses = { 200: orderViewSchema, 404: error('No such order for this API key’s tenant'), ...commonErrors };

export const createRefundResponses = {
  201: refundAnswerSchema.meta({ description: 'The refund request, started. A replay carries Idempotent-Replayed: true' }),
  404: error('No such order for this API key’s tenant'),
  ...idempotentPostErrors,
  400: error(
    'Invalid Idempotency-Key, malformed JSON or an invalid body (see problems), or amount_too_large: the amount exceeds what is ' +
      'still refundable (refundable names it, counting the requests in flight); nothing was started',
  ),
  409: error('The order is not completed, the key is in use, or its stored response expired'),
};

export const getRefundResponses = {
  200: refundAnswerSchema,
  404: error('No such refund request for this API key’s tenant'),
  ...commonErrors,
};

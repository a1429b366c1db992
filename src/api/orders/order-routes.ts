import type { FastifyError, FastifyPluginAsync, FastifyReply } from 'fastify';
import { parseIdempotencyKeyHeader } from '../../api-idempotency/idempotency-key-header.js';
import { z } from 'zod';
import { MAX_AMOUNT_MINOR, orderInputSchema } from '../../domain/order-input.js';
import { bearerAuth } from '../auth/bearer-auth.js';
import { CREATE_ORDER_OPERATION, createOrder, type ApiAnswer, type CreateOrderDeps } from './create-order.js';
import { CREATE_REFUND_OPERATION, createRefund } from './create-refund.js';
import { findTenantOrder } from './order-view.js';

export type OrderRoutesOptions = CreateOrderDeps;

/** An order request is a few hundred bytes; anything near this is not one. */
export const ORDER_BODY_LIMIT_BYTES = 16 * 1024;

/** The request body: the order input without its ID, which the server assigns; unknown fields are refused. */
const orderRequestSchema = orderInputSchema.omit({ orderId: true }).strict();

/** A refund request: omit `amount` to refund the whole order. */
const refundRequestSchema = z
  .object({
    amount: z
      .number({ error: 'amount must be a number of minor units (e.g. 500 for 5.00)' })
      .int('amount must be a whole number of minor units')
      .positive('amount must be positive')
      .max(MAX_AMOUNT_MINOR)
      .optional(),
  })
  .strict();

const problemsOf = (error: z.ZodError) =>
  error.issues.map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message));

/**
 * The orders API: POST /v1/orders (idempotent by tenant, operation and Idempotency-Key) and
 * GET /v1/orders/:id (isolated by tenant). Every route needs a bearer API key.
 */
export const orderRoutes: FastifyPluginAsync<OrderRoutesOptions> = (app, options) => {
  app.addHook('onRequest', bearerAuth(options.db));
  // JSON only: a text body would otherwise reach validation as a string and read as a bad order.
  app.removeContentTypeParser('text/plain');
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // Body parsing failures (bad JSON, too large, wrong content type) are the caller's to fix.
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const hint =
        status === 413
          ? `the body is larger than ${ORDER_BODY_LIMIT_BYTES} bytes`
          : status === 415
            ? 'send the body as JSON with "Content-Type: application/json"'
            : error.message;
      return reply.code(status).send({ error: error.code.toLowerCase(), message: hint });
    }
    request.log.error({ err: error }, 'orders API failed');
    return reply
      .code(503)
      .header('retry-after', '1')
      .send({ error: 'temporarily_unavailable', message: 'the order could not be processed right now; retry the same request with the same Idempotency-Key' });
  });

  app.post('/v1/orders', { bodyLimit: ORDER_BODY_LIMIT_BYTES }, async (request, reply) => {
    const tenantId = request.tenantId;
    if (!tenantId) throw new Error('bearer auth did not set the tenant');
    const key = parseIdempotencyKeyHeader(request.headers['idempotency-key']);
    if (!key.ok) return reply.code(400).send({ error: 'invalid_idempotency_key', message: key.message });
    const parsed = orderRequestSchema.safeParse(request.body);
    if (!parsed.success) {
      return reply.code(400).send({
        error: 'invalid_order',
        message: 'the order body is invalid; nothing was started',
        problems: problemsOf(parsed.error),
      });
    }
    const answer = await createOrder(options, { tenantId, operation: CREATE_ORDER_OPERATION, key: key.key }, parsed.data);
    return send(reply, answer);
  });

  app.get<{ Params: { id: string } }>('/v1/orders/:id', async (request, reply) => {
    const tenantId = request.tenantId;
    if (!tenantId) throw new Error('bearer auth did not set the tenant');
    const order = await findTenantOrder(options.db, tenantId, request.params.id);
    if (!order) return reply.code(404).send({ error: 'order_not_found', message: `no order '${request.params.id}' for this API key's tenant` });
    return order;
  });

  app.post<{ Params: { id: string } }>('/v1/orders/:id/refunds', { bodyLimit: ORDER_BODY_LIMIT_BYTES }, async (request, reply) => {
    const tenantId = request.tenantId;
    if (!tenantId) throw new Error('bearer auth did not set the tenant');
    const key = parseIdempotencyKeyHeader(request.headers['idempotency-key']);
    if (!key.ok) return reply.code(400).send({ error: 'invalid_idempotency_key', message: key.message });
    const parsed = refundRequestSchema.safeParse(request.body ?? {});
    if (!parsed.success) {
      return reply.code(400).send({ error: 'invalid_refund', message: 'the refund body is invalid; nothing was started', problems: problemsOf(parsed.error) });
    }
    const order = await findTenantOrder(options.db, tenantId, request.params.id);
    if (!order) return reply.code(404).send({ error: 'order_not_found', message: `no order '${request.params.id}' for this API key's tenant` });
    // Not stored under the key: the order may still complete, and the same request then succeeds.
    if (order.status !== 'completed') {
      return reply.code(409).send({ error: 'order_not_refundable', message: `order '${order.id}' is '${order.status}'; only a completed order can be refunded` });
    }
    const amount = parsed.data.amount ?? order.amount;
    if (amount > order.amount) {
      return reply.code(400).send({ error: 'invalid_refund', message: `amount ${amount} exceeds the order's ${order.amount} ${order.currency}` });
    }
    const answer = await createRefund(options, { tenantId, operation: CREATE_REFUND_OPERATION, key: key.key }, { orderId: order.id, amount, currency: order.currency });
    return send(reply, answer);
  });
  return Promise.resolve();
};

export function send(reply: FastifyReply, answer: ApiAnswer): FastifyReply {
  void reply.code(answer.statusCode);
  for (const [name, value] of Object.entries(answer.headers ?? {})) void reply.header(name, value);
  return reply.send(answer.body);
}

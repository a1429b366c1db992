// The orders API's routes: POST /v1/orders, GET /v1/orders/:id, POST /v1/orders/:id/refunds and
// the refund requests' GETs, with bearer auth, body limits and the API's error answers.
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { hasZodFastifySchemaValidationErrors, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ApiAnswer } from '../idempotency/idempotent-start.js';
import { bearerAuth } from '../auth/bearer-auth.js';
import { callerOf, checkCaller, idempotencyScopeOf } from './caller-checks.js';
import { CREATE_ORDER_OPERATION, createOrder, type CreateOrderDeps } from './create-order.js';
import { CREATE_REFUND_OPERATION, createRefund } from './create-refund.js';
import { findRefundRequest } from '../../money/payments/refund-requests.js';
import { registerDisputeRoutes } from './dispute-routes.js';
import {
  createOrderResponses,
  createRefundResponses,
  getOrderResponses,
  getRefundResponses,
  idempotentPostHeaders,
  orderIdParams,
  orderRefundParams,
  orderRequestSchema,
  refundIdParams,
  refundRequestSchema,
} from './order-contract.js';
import { findTenantOrder, refundRequestView } from './order-view.js';

export type OrderRoutesOptions = CreateOrderDeps & {
  /** Runs after bearer auth set the tenant, before anything else of the request: the per-tenant rate limit. */
  afterAuth?: onRequestHookHandler;
};

/** An order request is a few hundred bytes; anything near this is not one. */
export const ORDER_BODY_LIMIT_BYTES = 16 * 1024;

const bearer = [{ apiKey: [] }];

/** A request the route's zod schemas refused: what was wrong, in the API's error shape. */
function validationAnswer(error: FastifyError & { validation: { instancePath: string; message?: string }[] }, request: FastifyRequest): ApiAnswer {
  const problems = error.validation.map((issue) =>
    issue.instancePath.length > 1 ? `${issue.instancePath.slice(1).replaceAll('/', '.')}: ${issue.message ?? 'invalid'}` : (issue.message ?? 'invalid'),
  );
  if (error.validationContext === 'params') {
    if (/\/disputes\//.test(request.url)) return { statusCode: 404, body: { error: 'dispute_not_found', message: 'no such dispute for this API key’s tenant' } };
    return /\/refunds\/[^/]*$/.test(request.url)
      ? { statusCode: 404, body: { error: 'refund_not_found', message: 'no such refund request for this API key’s tenant' } }
      : { statusCode: 404, body: { error: 'order_not_found', message: 'no such order for this API key’s tenant' } };
  }
  const what = request.url.endsWith('/refunds') ? 'refund' : request.url.includes('/disputes/') ? 'evidence' : 'order';
  return { statusCode: 400, body: { error: `invalid_${what}`, message: `the ${what} body is invalid; nothing was started`, problems } };
}

/**
 * The orders API: POST /v1/orders (idempotent by tenant, operation and Idempotency-Key) and
 * GET /v1/orders/:id (isolated by tenant). Every route needs a bearer API key.
 */
export const orderRoutes: FastifyPluginAsync<OrderRoutesOptions> = (plugin, options) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  app.addHook('onRequest', bearerAuth(options.db));
  if (options.afterAuth) app.addHook('onRequest', options.afterAuth);
  // The routes' header schemas document the Idempotency-Key in the OpenAPI document; the key is
  // checked by the checkCaller preHandler, so it has one check and one error answer.
  app.setValidatorCompiler((route: Parameters<typeof validatorCompiler>[0]) => (route.httpPart === 'headers' ? () => true : validatorCompiler(route)));
  // JSON only: a text body would otherwise reach validation as a string and read as a bad order.
  app.removeContentTypeParser('text/plain');
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (hasZodFastifySchemaValidationErrors(error)) return send(reply, validationAnswer(error, request));
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

  app.post(
    '/v1/orders',
    {
      bodyLimit: ORDER_BODY_LIMIT_BYTES,
      config: { scope: 'orders:write' },
      preHandler: checkCaller({ idempotencyKey: true }),
      schema: {
        summary: 'Place an order and learn its payment outcome in one call',
        description:
          'Starts the order’s payment saga (or attaches to it) and answers as soon as the authorization is known; capture and ' +
          'confirmation go on after the answer. Idempotent by tenant and Idempotency-Key: a retry with the same key and body ' +
          'gets the first answer back (Idempotent-Replayed: true), after a 202 the same request attaches to the same update.',
        tags: ['orders'],
        security: bearer,
        headers: idempotentPostHeaders,
        body: orderRequestSchema,
        response: createOrderResponses,
      },
    },
    async (request, reply) => send(reply, await createOrder(options, idempotencyScopeOf(request, CREATE_ORDER_OPERATION), request.body)),
  );

  app.get(
    '/v1/orders/:id',
    {
      config: { scope: 'read' },
      preHandler: checkCaller({ idempotencyKey: false }),
      schema: {
        summary: 'Read an order as it stands now',
        tags: ['orders'],
        security: bearer,
        params: orderIdParams,
        response: getOrderResponses,
      },
    },
    async (request, reply) => {
      const order = await findTenantOrder(options.db, callerOf(request).tenantId, request.params.id);
      if (!order) return reply.code(404).send({ error: 'order_not_found', message: `no order '${request.params.id}' for this API key's tenant` });
      return order;
    },
  );

  app.post(
    '/v1/orders/:id/refunds',
    {
      bodyLimit: ORDER_BODY_LIMIT_BYTES,
      config: { scope: 'refunds:write' },
      preHandler: checkCaller({ idempotencyKey: true }),
      schema: {
        summary: 'Refund a completed order, in whole or in part',
        tags: ['refunds'],
        security: bearer,
        headers: idempotentPostHeaders,
        params: orderIdParams,
        body: refundRequestSchema.optional(),
        response: createRefundResponses,
      },
    },
    async (request, reply) => {
      const scope = idempotencyScopeOf(request, CREATE_REFUND_OPERATION);
      const order = await findTenantOrder(options.db, scope.tenantId, request.params.id);
      if (!order) return reply.code(404).send({ error: 'order_not_found', message: `no order '${request.params.id}' for this API key's tenant` });
      // Not stored under the key: the order may still complete, and the same request then succeeds.
      if (order.status !== 'completed') {
        return reply.code(409).send({ error: 'order_not_refundable', message: `order '${order.id}' is '${order.status}'; only a completed order can be refunded` });
      }
      // What is still refundable is the refund budget's to say (amount_too_large names it).
      const amount = request.body?.amount ?? order.amount;
      const answer = await createRefund(options, scope, { orderId: order.id, amount });
      return send(reply, answer);
    },
  );

  const refundNotFound = (id: string) => ({ error: 'refund_not_found', message: `no refund request '${id}' for this API key's tenant` });

  app.get(
    '/v1/refunds/:id',
    {
      config: { scope: 'read' },
      preHandler: checkCaller({ idempotencyKey: false }),
      schema: {
        summary: 'Read a refund request: pending, succeeded (with the Stripe Refund) or failed (with why)',
        tags: ['refunds'],
        security: bearer,
        params: refundIdParams,
        response: getRefundResponses,
      },
    },
    async (request, reply) => {
      const found = await findRefundRequest(options.db, callerOf(request).tenantId, request.params.id);
      if (!found) return reply.code(404).send(refundNotFound(request.params.id));
      return refundRequestView(found);
    },
  );

  app.get(
    '/v1/orders/:id/refunds/:refundId',
    {
      config: { scope: 'read' },
      preHandler: checkCaller({ idempotencyKey: false }),
      schema: {
        summary: 'Read one of an order’s refund requests',
        tags: ['refunds'],
        security: bearer,
        params: orderRefundParams,
        response: getRefundResponses,
      },
    },
    async (request, reply) => {
      const found = await findRefundRequest(options.db, callerOf(request).tenantId, request.params.refundId);
      if (!found || found.orderId !== request.params.id) return reply.code(404).send(refundNotFound(request.params.refundId));
      return refundRequestView(found);
    },
  );
  registerDisputeRoutes(plugin, options, send);
  return Promise.resolve();
};

export function send(reply: FastifyReply, answer: ApiAnswer): FastifyReply {
  void reply.code(answer.statusCode);
  for (const [name, value] of Object.entries(answer.headers ?? {})) void reply.header(name, value);
  return reply.send(answer.body);
}

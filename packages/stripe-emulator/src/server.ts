// The emulator's HTTP server: a fastify app that routes every Stripe endpoint through the
// pipeline, mounts the control API, logs each request and answers Stripe-shaped errors.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import qs from 'qs';
import { ZodError, z } from 'zod';
import { registerControlApi } from './control-api.js';
import type { EmulatorCore } from './emulator.js';
import type { Endpoint } from './endpoint.js';
import { ApiError, invalidRequest, unrecognizedUrl } from './errors.js';
import { toFormParams } from './params.js';
import { runStripeRequest, type Outcome } from './pipeline.js';
import { describeRequest, type RequestLogger } from './request-log.js';
import { STRIPE_ENDPOINTS } from './stripe-api.js';

function parseForm(text: string): unknown {
  // Stripe's SDKs send nested parameters as `a[b]=c` and arrays as `a[0]=c`.
  return qs.parse(text, { depth: 10, arrayLimit: 100, parameterLimit: 2000 });
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The fastify app: Stripe's `/v1` surface, the control API, and Stripe-shaped errors for the rest. */
export function buildServer(core: EmulatorCore, logger: RequestLogger | null): FastifyInstance {
  const app = Fastify({
    logger: false,
    // Lets close() end keep-alive sockets the SDK's agent holds open.
    forceCloseConnections: true,
    routerOptions: { querystringParser: (text) => parseForm(text) as Record<string, unknown> },
  });

  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, parseForm(typeof body === 'string' ? body : body.toString('utf8')));
  });

  const log = (request: FastifyRequest, outcome: Pick<Outcome, 'status' | 'idempotencyKey' | 'replayed' | 'drop'> & { requestId: string | null }, startedAt: number) => {
    core.counters.response(outcome.status);
    if (!logger) return;
    const line = {
      method: request.method,
      path: request.url,
      status: outcome.status,
      idempotencyKey: outcome.idempotencyKey,
      replayed: outcome.replayed,
      dropped: outcome.drop,
      requestId: outcome.requestId,
      durationMs: Math.round(performance.now() - startedAt),
    };
    logger.info(line, describeRequest(line));
  };

  const handle = (endpoint: Endpoint) => async (request: FastifyRequest, reply: FastifyReply) => {
    const startedAt = performance.now();
    const outcome = await runStripeRequest(core, endpoint, {
      method: request.method,
      path: request.url.split('?', 1)[0] ?? request.url,
      authorization: headerValue(request.headers.authorization),
      idempotencyKey: headerValue(request.headers['idempotency-key']),
      stripeVersion: headerValue(request.headers['stripe-version']),
      params: toFormParams(request.method === 'POST' ? request.body : request.query),
      pathParams: (request.params ?? {}) as Record<string, string>,
    });
    log(request, { ...outcome, requestId: outcome.headers['request-id'] ?? null }, startedAt);
    if (outcome.drop) {
      // The effect is committed and saved; the client just never hears back.
      reply.hijack();
      request.raw.socket.destroy();
      return;
    }
    return reply.code(outcome.status).headers(outcome.headers).type('application/json').send(outcome.body);
  };

  for (const endpoint of STRIPE_ENDPOINTS) {
    app.route({ method: endpoint.method, url: endpoint.path, handler: handle(endpoint) });
  }
  registerControlApi(app, core);
  // close() ends pending deliveries and settlements too, so nothing fires after it.
  app.addHook('onClose', (_instance, done) => {
    core.stop();
    done();
  });

  const sendError = (request: FastifyRequest, reply: FastifyReply, error: ApiError) => {
    const startedAt = performance.now();
    if (request.url.startsWith('/v1')) {
      core.counters.request();
      log(request, { status: error.status, idempotencyKey: null, replayed: false, drop: false, requestId: null }, startedAt);
    }
    return reply.code(error.status).type('application/json').send(`${JSON.stringify(error.envelope(), null, 2)}\n`);
  };

  app.setNotFoundHandler((request, reply) => sendError(request, reply, unrecognizedUrl(request.method, request.url.split('?', 1)[0] ?? '')));

  app.setErrorHandler((error: unknown, request, reply) => {
    if (error instanceof ZodError) return sendError(request, reply, invalidRequest(z.prettifyError(error)));
    if (error instanceof ApiError) return sendError(request, reply, error);
    // Fastify's own errors (bad body, unsupported media type) carry their HTTP status.
    const status = (error as { statusCode?: unknown }).statusCode;
    const message = error instanceof Error ? error.message : 'An unknown error occurred';
    if (typeof status === 'number' && status < 500) return sendError(request, reply, invalidRequest(message, { status }));
    return sendError(request, reply, new ApiError(500, { type: 'api_error', message }));
  });

  return app;
}

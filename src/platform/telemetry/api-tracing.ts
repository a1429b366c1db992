// The API's tracing: a server span per request by route pattern, in whose context the handler's
// Temporal calls run.
import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';

const tracer = trace.getTracer('order-payments-api');
const spans = new WeakMap<FastifyRequest, Span>();

/**
 * A server span per request (a no-op without a tracer provider): `POST /v1/orders`, by route
 * pattern, with the status. The handler runs inside it, so the workflow start or update the
 * Temporal client makes (OpenTelemetryWorkflowClientInterceptor) is its child, and the workflow's
 * spans follow. Nothing from the request body, the tenant or the key is recorded.
 */
export function registerApiTracing(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const span = tracer.startSpan(`${request.method} ${route}`, {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': request.method, 'http.route': route },
    });
    spans.set(request, span);
    // The rest of the request (its handler included) runs in the span's context.
    context.with(trace.setSpan(context.active(), span), done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = spans.get(request);
    if (span) {
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${reply.statusCode}` });
      span.end();
      spans.delete(request);
    }
    done();
  });
}

// The control API under /_emulator, for tests and chaos runs: fault rules, the clock, counters,
// state dumps, events, webhook endpoints, deliveries and timings, settling a payment now,
// deciding a dispute, reset.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { EmulatorCore } from './emulator.js';
import { faultRuleSpecSchema } from './faults.js';
import { webhookEndpointInputSchema, webhookEndpointObject } from './webhooks-endpoints.js';

/** Outside `/v1`, so no Stripe path can ever collide with it. */
export const CONTROL_PREFIX = '/_emulator';

/** By `ms`, or by `seconds` (the unit of Stripe's timestamps, such as a dispute's `due_by`). */
const advanceSchema = z.union([z.strictObject({ ms: z.number().int().min(0) }), z.strictObject({ seconds: z.number().int().min(0) })]);
const decideSchema = z.strictObject({ outcome: z.enum(['won', 'lost']) });
const eventsQuerySchema = z.object({ type: z.string().optional(), account: z.string().optional() });
const settleSchema = z.strictObject({ outcome: z.enum(['succeeded', 'failed']).optional() });
const webhookConfigSchema = z.strictObject({
  retryInitialMs: z.number().int().min(0).optional(),
  retryMaxMs: z.number().int().min(0).optional(),
  maxAttempts: z.number().int().min(1).max(100).optional(),
  timeoutMs: z.number().int().min(1).optional(),
  asyncSettleMs: z.number().int().min(0).optional(),
  authorizationWindowMs: z.number().int().min(1_000).optional(),
});

/**
 * The control API: fault rules, the clock, counters, state dumps, recorded events and reset.
 * It takes and returns JSON and needs no API key; it is for tests and chaos runs, not clients.
 */
export function registerControlApi(app: FastifyInstance, core: EmulatorCore): void {
  app.get(`${CONTROL_PREFIX}/health`, () => ({ ok: true }));

  app.get(`${CONTROL_PREFIX}/state`, () => core.dump());
  app.get(`${CONTROL_PREFIX}/counters`, () => core.counters.snapshot());
  app.post(`${CONTROL_PREFIX}/reset`, () => {
    core.reset();
    return { reset: true };
  });

  app.get(`${CONTROL_PREFIX}/faults`, () => ({ data: core.faults.list() }));
  app.post(`${CONTROL_PREFIX}/faults`, async (request, reply) => {
    const rule = core.faults.add(faultRuleSpecSchema.parse(request.body));
    return reply.code(201).send(rule);
  });
  app.delete(`${CONTROL_PREFIX}/faults`, () => {
    core.faults.clear();
    return { cleared: true };
  });
  app.delete<{ Params: { id: string } }>(`${CONTROL_PREFIX}/faults/:id`, async (request, reply) => {
    const removed = core.faults.remove(request.params.id);
    return reply.code(removed ? 200 : 404).send({ removed });
  });

  app.get(`${CONTROL_PREFIX}/clock`, () => ({ nowMs: core.clock.nowMs(), offsetMs: core.clock.offsetMs }));
  app.post(`${CONTROL_PREFIX}/clock/advance`, (request) => {
    const advance = advanceSchema.parse(request.body);
    core.advanceClock('ms' in advance ? advance.ms : advance.seconds * 1000);
    return { nowMs: core.clock.nowMs(), offsetMs: core.clock.offsetMs };
  });

  app.get(`${CONTROL_PREFIX}/events`, (request) => {
    const filter = eventsQuerySchema.parse(request.query);
    return { object: 'list', data: core.events(filter) };
  });

  // Webhook endpoints registered here receive every account's events; the answer holds the secret.
  app.post(`${CONTROL_PREFIX}/webhook_endpoints`, async (request, reply) => {
    const record = core.webhookEndpoints.add(webhookEndpointInputSchema.parse(request.body));
    return reply.code(201).send(webhookEndpointObject(record, true));
  });
  app.get(`${CONTROL_PREFIX}/webhook_endpoints`, () => ({
    data: core.webhookEndpoints.list().map((record) => webhookEndpointObject(record, false)),
  }));
  app.delete<{ Params: { id: string } }>(`${CONTROL_PREFIX}/webhook_endpoints/:id`, async (request, reply) => {
    const removed = core.webhookEndpoints.remove(request.params.id);
    return reply.code(removed ? 200 : 404).send({ removed });
  });
  app.get(`${CONTROL_PREFIX}/webhooks/deliveries`, () => ({ data: core.webhooks.attempts() }));
  const timing = () => ({ asyncSettleMs: core.settlements.delayMs, authorizationWindowMs: core.authorizationWindowMs });
  app.get(`${CONTROL_PREFIX}/webhooks/config`, () => ({ ...core.webhooks.options, ...timing() }));
  app.post(`${CONTROL_PREFIX}/webhooks/config`, (request) => {
    const { asyncSettleMs, authorizationWindowMs, ...delivery } = webhookConfigSchema.parse(request.body);
    if (asyncSettleMs !== undefined) core.settlements.configure(asyncSettleMs);
    if (authorizationWindowMs !== undefined) core.configureAuthorizationWindow(authorizationWindowMs);
    return { ...core.webhooks.configure(delivery), ...timing() };
  });

  // The issuer's decision on an open dispute, for evidence that does not decide it by itself.
  app.post<{ Params: { id: string } }>(`${CONTROL_PREFIX}/disputes/:id/decide`, async (request, reply) => {
    const { outcome } = decideSchema.parse(request.body);
    const decided = core.decideDispute(request.params.id, outcome);
    if (decided === 'missing') return reply.code(404).send({ decided: false, error: `no dispute ${request.params.id}` });
    if (decided === 'closed') return reply.code(409).send({ decided: false, error: `dispute ${request.params.id} is already closed` });
    return reply.code(200).send({ decided: true, dispute: decided });
  });

  // Settles a processing PaymentIntent now instead of after the async settle delay.
  app.post<{ Params: { id: string } }>(`${CONTROL_PREFIX}/payment_intents/:id/settle`, async (request, reply) => {
    const { outcome } = settleSchema.parse(request.body ?? {});
    const settled = core.settlePaymentIntent(request.params.id, outcome);
    return reply.code(settled ? 200 : 409).send({ settled });
  });
}

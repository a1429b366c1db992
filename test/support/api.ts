// Test support: the orders API on a saga harness's database and task queue, driven in-process
// through Fastify's inject().
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { pino, type Logger } from 'pino';
import { DEFAULT_API_IDEMPOTENCY, type ApiIdempotencySettings } from '../../src/api/idempotency/settings.js';
import { createApiKey } from '../../src/api/auth/api-keys.js';
import type { RateLimitSettings } from '../../src/api/rate-limit.js';
import { buildApiServer } from '../../src/api/server.js';
import { setStock } from '../../src/orders/stock.js';
import { temporalSignaller } from '../../src/messaging/webhooks/workflow-handoff.js';
import type { SagaHarness } from './saga-harness.js';

export interface OrdersApi {
  app: FastifyInstance;
  /** Replaces the test seam that runs after the workflow start, before the response is stored. */
  setAfterWorkflowStart(hook: ((orderId: string) => Promise<void>) | undefined): void;
  keyFor(tenantId: string): Promise<string>;
  /** A valid order body with a fresh SKU, stocked for every tenant `keyFor` made a key for (stock is per tenant). */
  orderBody(overrides?: Record<string, unknown>): Promise<Record<string, unknown>>;
  post(options: { apiKey?: string; idempotencyKey?: string; body?: unknown; payload?: string; headers?: Record<string, string> }): Promise<ApiResponse>;
  get(apiKey: string, path: string): Promise<ApiResponse>;
}

export interface ApiResponse {
  status: number;
  headers: Record<string, unknown>;
  body: Record<string, unknown>;
}

/** The orders API on the harness's database and Temporal task queue, driven through inject(). */
export async function startOrdersApi(
  harness: SagaHarness,
  idempotency: ApiIdempotencySettings = DEFAULT_API_IDEMPOTENCY,
  options: { outcomeWaitMs?: number; rateLimit?: RateLimitSettings; logger?: Logger; db?: Pool } = {},
): Promise<OrdersApi> {
  let afterWorkflowStart: ((orderId: string) => Promise<void>) | undefined;
  const tenants = new Set<string>();
  const app = await buildApiServer({
    // The API's own login (migration 017): the routes run with the API's grants only.
    db: options.db ?? harness.db.servicePool('api'),
    signalPaymentEvent: temporalSignaller(harness.client),
    stripeWebhook: { secrets: ['whsec_orders_api_suite'], toleranceSeconds: 300 },
    logger: options.logger ?? pino({ level: 'silent' }),
    temporal: { client: harness.client, taskQueue: harness.taskQueue },
    apiIdempotency: idempotency,
    ...(options.outcomeWaitMs === undefined ? {} : { outcomeWaitMs: options.outcomeWaitMs }),
    ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
    orderHooks: { afterWorkflowStart: (orderId) => afterWorkflowStart?.(orderId) ?? Promise.resolve() },
  });
  const toResponse = (response: { statusCode: number; headers: Record<string, unknown>; body: string }): ApiResponse => ({
    status: response.statusCode,
    headers: response.headers,
    body: response.body ? (JSON.parse(response.body) as Record<string, unknown>) : {},
  });
  return {
    app,
    setAfterWorkflowStart(hook) {
      afterWorkflowStart = hook;
    },
    async keyFor(tenantId) {
      tenants.add(tenantId);
      return (await createApiKey(harness.db.pool, tenantId)).key;
    },
    async orderBody(overrides = {}) {
      const sku = `sku-${randomUUID().slice(0, 12)}`;
      for (const tenantId of tenants) await setStock(harness.db.pool, sku, 100, tenantId);
      return { customerId: 'cust-api', amount: 4200, currency: 'usd', paymentMethod: 'pm_card_visa', sku, quantity: 1, ...overrides };
    },
    async post({ apiKey, idempotencyKey, body, payload, headers = {} }) {
      const response = await app.inject({
        method: 'POST',
        url: '/v1/orders',
        headers: {
          'content-type': 'application/json',
          ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }),
          ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
          ...headers,
        },
        payload: payload ?? JSON.stringify(body),
      });
      return toResponse(response);
    },
    async get(apiKey, path) {
      return toResponse(await app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${apiKey}` } }));
    },
  };
}

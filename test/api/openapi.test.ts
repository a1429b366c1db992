// GET /openapi.json is a valid OpenAPI 3.1 document covering every orders route, header and status
// code, and /docs serves it human-readable.
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';
import { startOrdersApi, type OrdersApi } from '../support/api.js';

let h: SagaHarness;
let api: OrdersApi;
let document: {
  openapi: string;
  paths: Record<string, Record<string, { parameters?: { in: string; name: string }[]; responses: Record<string, { headers?: Record<string, unknown>; content?: unknown }> }>>;
};

beforeAll(async () => {
  h = await startSagaHarness({ worker: false });
  api = await startOrdersApi(h);
  const response = await api.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(response.statusCode).toBe(200);
  document = JSON.parse(response.body) as typeof document;
});
afterAll(async () => {
  await api.app.close();
  await h.close();
});

describe('GET /openapi.json: the contract, from the zod schemas that validate requests', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await new Validator().validate(document as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('describes every route of the orders API, its Idempotency-Key header, and every status code with its body', () => {
    expect(Object.keys(document.paths).sort()).toEqual([
      '/healthz',
      '/v1/orders',
      '/v1/orders/{id}',
      '/v1/orders/{id}/disputes/{disputeId}',
      '/v1/orders/{id}/disputes/{disputeId}/accept',
      '/v1/orders/{id}/disputes/{disputeId}/evidence',
      '/v1/orders/{id}/refunds',
      '/v1/orders/{id}/refunds/{refundId}',
      '/v1/refunds/{id}',
      '/webhooks/stripe',
    ]);
    for (const path of ['/v1/refunds/{id}', '/v1/orders/{id}/refunds/{refundId}']) {
      expect(Object.keys(document.paths[path]?.get?.responses ?? {})).toEqual(expect.arrayContaining(['200', '404', '401', '403']));
    }
    const create = document.paths['/v1/orders']?.post;
    expect(create?.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ in: 'header', name: 'idempotency-key' })]));
    expect(Object.keys(create?.responses ?? {}).sort()).toEqual(['201', '202', '400', '401', '403', '409', '413', '415', '422', '429', '503']);
    for (const response of Object.values(create?.responses ?? {})) expect(response.content).toBeDefined();
    expect(Object.keys(create?.responses['201']?.headers ?? {})).toEqual(expect.arrayContaining(['Idempotent-Replayed', 'Location']));
    expect(Object.keys(create?.responses['202']?.headers ?? {})).toEqual(expect.arrayContaining(['Location', 'Retry-After']));
    for (const status of ['409', '429', '503']) expect(Object.keys(create?.responses[status]?.headers ?? {})).toContain('Retry-After');
    const refund = document.paths['/v1/orders/{id}/refunds']?.post;
    expect(refund?.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ in: 'header', name: 'idempotency-key' }), expect.objectContaining({ in: 'path', name: 'id' })]));
    expect(Object.keys(document.paths['/v1/orders/{id}']?.get?.responses ?? {})).toEqual(expect.arrayContaining(['200', '404', '401', '403']));
  });

  it('serves human-readable docs at /docs', async () => {
    const docs = await api.app.inject({ method: 'GET', url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toContain('swagger-ui');
  });
});

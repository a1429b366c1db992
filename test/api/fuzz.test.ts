// Fuzzes the live API against its own OpenAPI document with schemathesis: no 5xx, every bad
// input a 4xx that starts nothing.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseIdempotencyKeyHeader } from '../../src/api/idempotency/idempotency-key-header.js';
import { parseOrderInput, workflowIdForOrder } from '../../src/domain/order-input.js';
import { ensureSchemathesis } from '../../src/platform/tools/schemathesis.js';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';
import { startOrdersApi, type OrdersApi } from '../support/api.js';

/**
 * schemathesis against the live API and its own OpenAPI document: every operation, positive and
 * negative examples, bounded by FUZZ_MAX_EXAMPLES per operation (15 in `npm test`, more with
 * `npm run fuzz:api`). Bad input of every kind must get a 4xx and start nothing.
 */
const MAX_EXAMPLES = Number(process.env.FUZZ_MAX_EXAMPLES ?? 15);
const CHECKS = ['not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_schema_conformance', 'negative_data_rejection', 'response_headers_conformance'];

let h: SagaHarness;
let api: OrdersApi;
let schemathesis: string;
let reportDir: string;

beforeAll(async () => {
  schemathesis = await ensureSchemathesis((line) => process.stderr.write(`test setup: ${line}\n`));
  h = await startSagaHarness();
  api = await startOrdersApi(h);
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  reportDir = await mkdtemp(path.join(os.tmpdir(), 'api-fuzz-'));
}, 300_000);
afterAll(async () => {
  await api.app.close();
  await h.close();
  await rm(reportDir, { recursive: true, force: true });
});

describe('the API fuzzed against its OpenAPI document (schemathesis)', () => {
  it('no 5xx on any input, every invalid request a 4xx, responses as documented; nothing started by bad input; invariants clean', async () => {
    const url = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    const apiKey = await api.keyFor('tenant-fuzz');
    const junit = path.join(reportDir, 'junit.xml');
    const run = await execa(
      schemathesis,
      [
        'run', `${url}/openapi.json`,
        '--header', `Authorization: Bearer ${apiKey}`,
        '--max-examples', String(MAX_EXAMPLES),
        '--checks', CHECKS.join(','),
        '--phases', 'examples,coverage,fuzzing',
        '--seed', process.env.FUZZ_SEED ?? '20261203',
        '--request-timeout', '30',
        '--report', 'junit', '--report-junit-path', junit,
        '--generation-database', 'none',
        '--no-color',
      ],
      { reject: false, all: true, env: { SCHEMATHESIS_HOOKS: '' } },
    );
    expect(run.exitCode, run.all).toBe(0);
    expect(await readFile(junit, 'utf8')).toMatch(/<testsuite[^>]+tests="[1-9]/);

    // Whatever was stored or started came from a valid request.
    const { rows: keys } = await h.db.pool.query<{ idempotency_key: string }>('select idempotency_key from api_idempotency');
    for (const { idempotency_key: key } of keys) expect(parseIdempotencyKeyHeader(key).ok, key).toBe(true);
    const { rows: orders } = await h.db.pool.query<{ order_id: string; request: Record<string, unknown> }>('select order_id, request from api_orders');
    for (const order of orders) expect(parseOrderInput({ orderId: order.order_id, ...order.request }).ok, JSON.stringify(order.request)).toBe(true);
    const known = new Set(orders.map((order) => workflowIdForOrder(order.order_id)));
    const started: string[] = [];
    for await (const workflow of h.client.workflow.list({ query: `TaskQueue = '${h.taskQueue}'` })) started.push(workflow.workflowId);
    expect(started.filter((id) => !known.has(id))).toEqual([]);
    const intents = await h.stripe.paymentIntents.list({ limit: 100 });
    expect(intents.data.filter((intent) => !known.has(workflowIdForOrder(intent.metadata.order_id ?? '')))).toEqual([]);

    // Every order the fuzzer placed finishes, and the books and Stripe agree.
    for (const id of known) await h.client.workflow.getHandle(id).result().catch(() => undefined);
    await h.expectInvariants(orders.map((order) => order.order_id));
  }, 600_000);
});

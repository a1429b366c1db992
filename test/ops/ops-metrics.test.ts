/**
 * The operations files (ops/, issue 15): the Prometheus alerting rules and the Grafana dashboard
 * are well-formed, and every metric they name, with the labels they match on, is exported by a
 * running process after the demo's orders. The processes are the stack's own (the worker, the
 * API, the outbox dispatcher and the receipts consumer, started by src/operations/stack as `npm run stack`
 * starts them, each with its metrics on a free port), on this run's Temporal dev server, a
 * database, a Stripe emulator and a NATS stream of their own; the orders are the demo's
 * (src/operations/demo), plus the paths the demo does not take but the alerts watch: a Stripe 5xx, an
 * asynchronous payment settled by its webhook, an order that ends in needs_review, and an order
 * through the orders API.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { z } from 'zod';
import { createApiKey } from '../../src/api/auth/api-keys.js';
import { runDemo } from '../../src/operations/demo/demo.js';
import type { OrderInput } from '../../src/domain/order-input.js';
import { setStock } from '../../src/orders/stock.js';
import { PROJECT_ROOT } from '../../src/operations/stack/paths.js';
import { findFreePort } from '../../src/operations/stack/ports.js';
import { startServiceProcess } from '../../src/operations/stack/service-process.js';
import { STACK_STRIPE_KEY } from '../../src/operations/stack/stack.js';
import type { StackState } from '../../src/operations/stack/stack-state.js';
import { startWorkerProcess } from '../../src/operations/stack/worker-process.js';
import { startOrder } from '../../src/saga-client/start-order.js';
import { startStripeEmulator, type StripeEmulator } from '@order-payments/stripe-emulator';
import { createStripeClient } from '../../src/money/stripe/client.js';
import { untilActivityPending } from '../../src/platform/temporal/pending-activity.js';
import { createTestStream, TEST_NATS_URL, type TestStream } from '../support/nats.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { samples, scrape } from '../support/prometheus-text.js';
import { seriesSelectors, type SeriesSelector } from './promql-selectors.js';
import { developmentDataConverter } from '../support/payload-keys.js';

const OPS = path.join(PROJECT_ROOT, 'ops');
const ALERTS_FILE = path.join(OPS, 'prometheus', 'alerts.yml');
const PROMETHEUS_FILE = path.join(OPS, 'prometheus', 'prometheus.yml');
const DASHBOARD_FILE = path.join(OPS, 'grafana', 'order-payments-dashboard.json');
/** The README's heading the runbook annotations point at. */
const RUNBOOK_ANCHOR = /README\.md#[a-z0-9-]+$/;

const ruleSchema = z.strictObject({
  alert: z.string().regex(/^[A-Z][A-Za-z0-9]+$/, 'an alert name in CamelCase'),
  expr: z.string().min(1),
  for: z.string().regex(/^\d+[smh]$/, 'a duration such as 5m'),
  labels: z.object({ severity: z.enum(['page', 'ticket']) }).loose(),
  annotations: z
    .object({ summary: z.string().min(1), description: z.string().min(1), runbook_url: z.string().regex(RUNBOOK_ANCHOR) })
    .loose(),
});
const rulesFileSchema = z.strictObject({
  groups: z.array(z.strictObject({ name: z.string().min(1), interval: z.string().optional(), rules: z.array(ruleSchema).min(1) })).min(1),
});
type Rule = z.output<typeof ruleSchema>;

interface Panel {
  id?: number;
  title?: string;
  type?: string;
  datasource?: unknown;
  targets?: { expr?: string; refId?: string; datasource?: unknown }[];
  panels?: Panel[];
}
const dashboardSchema = z
  .object({
    uid: z.string().min(1),
    title: z.string().min(1),
    schemaVersion: z.number().int().min(36),
    templating: z.object({ list: z.array(z.object({ name: z.string(), type: z.string() }).loose()) }),
    panels: z.array(z.custom<Panel>((value) => typeof value === 'object' && value !== null)).min(1),
  })
  .loose();

async function readRules(): Promise<Rule[]> {
  const parsed = rulesFileSchema.parse(parseYaml(await readFile(ALERTS_FILE, 'utf8')));
  return parsed.groups.flatMap((group) => group.rules);
}

async function readDashboard() {
  return dashboardSchema.parse(JSON.parse(await readFile(DASHBOARD_FILE, 'utf8')));
}

/** Every panel, rows' nested panels included. */
function allPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((panel) => [panel, ...allPanels(panel.panels ?? [])]);
}

/** The panels that draw something (rows only group). */
function graphPanels(panels: Panel[]): Panel[] {
  return allPanels(panels).filter((panel) => panel.type !== 'row');
}

/** Where each expression comes from, for the failure messages. */
async function namedExpressions(): Promise<{ where: string; expr: string }[]> {
  const rules = (await readRules()).map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr }));
  const panels = graphPanels((await readDashboard()).panels).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title ?? '?'}" ${target.refId ?? ''}`, expr: target.expr ?? '' })),
  );
  return [...rules, ...panels];
}

describe('the operations files are well-formed', () => {
  it('every alerting rule has an alert name, an expr, a for, labels.severity and annotations.summary, description and a runbook link into the README', async () => {
    const rules = await readRules();
    const names = rules.map((rule) => rule.alert);
    expect(new Set(names).size).toBe(names.length);
    // The five the issue asks for, by what they watch.
    const watched = rules.map((rule) => rule.expr).join('\n');
    for (const metric of [
      'order_payments_needs_review_total',
      'order_payments_outbox_lag_seconds',
      'order_payments_orders_total{outcome="compensated"}',
      'order_payments_stripe_request_duration_seconds_count',
      'temporal_workflow_task_execution_failed',
    ]) {
      expect(watched).toContain(metric);
    }
    const readme = await readFile(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
    const anchors = new Set([...readme.matchAll(/^#{2,4} (.+)$/gm)].map((heading) => githubAnchor(heading[1] ?? '')));
    for (const rule of rules) {
      const anchor = rule.annotations.runbook_url.split('#')[1] ?? '';
      expect(anchors, `${rule.alert}'s runbook_url points at #${anchor}, a heading of the README`).toContain(anchor);
      expect(() => seriesSelectors(rule.expr), rule.alert).not.toThrow();
    }
  });

  it('every dashboard panel has a query, each a PromQL expression over the Prometheus datasource variable', async () => {
    const dashboard = await readDashboard();
    const datasource = dashboard.templating.list.find((variable) => variable.type === 'datasource');
    expect(datasource).toMatchObject({ query: 'prometheus' });
    const panels = graphPanels(dashboard.panels);
    expect(panels.length).toBeGreaterThanOrEqual(10);
    const ids = allPanels(dashboard.panels).map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of panels) {
      const title = panel.title ?? `panel ${String(panel.id)}`;
      expect(panel.targets?.length ?? 0, `${title} has a target`).toBeGreaterThan(0);
      expect(panel.datasource, title).toEqual({ type: 'prometheus', uid: `\${${datasource?.name ?? ''}}` });
      for (const target of panel.targets ?? []) {
        expect(target.expr ?? '', `${title} ${target.refId ?? ''} has an expr`).not.toBe('');
        expect(() => seriesSelectors(target.expr ?? ''), title).not.toThrow();
      }
    }
  });

  it('the scrape config scrapes the four processes and loads the rules', async () => {
    const config = z
      .object({
        rule_files: z.array(z.string()),
        scrape_configs: z.array(z.object({ job_name: z.string(), static_configs: z.array(z.object({ targets: z.array(z.string()) })) }).loose()),
      })
      .loose()
      .parse(parseYaml(await readFile(PROMETHEUS_FILE, 'utf8')));
    expect(config.rule_files).toContain('alerts.yml');
    const targets = config.scrape_configs.flatMap((job) => job.static_configs.flatMap((group) => group.targets));
    expect(targets.sort()).toEqual(['127.0.0.1:9464', '127.0.0.1:9465', '127.0.0.1:9466', '127.0.0.1:9467']);
  });

  it('promtool accepts the rules and the config, and each alert fires on its scenario and stays quiet on the rest', async () => {
    // The test setup finds or installs it (src/platform/tools/promtool.ts), or stops the run saying how to get it.
    const promtool = inject('promtoolPath');
    execFileSync(promtool, ['check', 'rules', ALERTS_FILE], { stdio: 'pipe' });
    execFileSync(promtool, ['check', 'config', PROMETHEUS_FILE], { stdio: 'pipe' });
    const rules = new Map((await readRules()).map((rule) => [rule.alert, rule.expr]));
    const tests = ALERT_SCENARIOS.map((scenario) => {
      const expr = rules.get(scenario.alert);
      if (expr === undefined) throw new Error(`no rule ${scenario.alert}`);
      return {
        interval: '1m',
        input_series: scenario.series.map(([series, values]) => ({ series, values })),
        // sgn(): 1 for each series the alert would fire for, so the expected values need no arithmetic.
        promql_expr_test: scenario.evaluations.map(([at, firing]) => ({
          expr: `sgn(${expr})`,
          eval_time: at,
          exp_samples: firing.map((labels) => ({ labels, value: 1 })),
        })),
      };
    });
    const file = path.join(scratch, 'alerts.test.yml');
    await writeFile(file, stringifyYaml({ rule_files: [ALERTS_FILE], evaluation_interval: '1m', tests }));
    try {
      execFileSync(promtool, ['test', 'rules', file], { stdio: 'pipe', encoding: 'utf8' });
    } catch (error) {
      const failed = error as { stdout?: string; stderr?: string };
      throw new Error(`promtool test rules failed:\n${failed.stdout ?? ''}${failed.stderr ?? ''}`);
    }
  });
});

/**
 * For promtool: input series (promtool's expanding notation, one sample a minute; `_` = no
 * sample) and, at each evaluation time, the label sets the alert fires for (none: quiet).
 */
const ALERT_SCENARIOS: { alert: string; series: [string, string][]; evaluations: [string, string[]][] }[] = [
  {
    alert: 'OrderNeedsReview',
    series: [
      // The first needs_review since the worker started: the series appears at 1, which increase() alone cannot see.
      ['order_payments_needs_review_total{source="saga"}', '_x90 1x90'],
      // A counter that already existed goes from 1 to 2 at 100 min.
      ['order_payments_needs_review_total{source="late_capture"}', '1x99 2x80'],
    ],
    evaluations: [
      ['80m', []],
      ['95m', ['{source="saga"}']],
      ['105m', ['{source="late_capture"}', '{source="saga"}']],
      ['175m', []],
    ],
  },
  {
    alert: 'OutboxLagging',
    series: [['order_payments_outbox_lag_seconds{instance="a"}', '0x10 30 90 150 0x10']],
    evaluations: [
      ['11m', []],
      ['12m', ['{}']],
      ['14m', []],
    ],
  },
  {
    alert: 'CompensationRateHigh',
    series: [
      ['order_payments_orders_total{outcome="completed"}', '0+10x120'],
      // 0.5 a minute against 10 completed (under 5%), then 3 a minute (23%).
      ['order_payments_orders_total{outcome="compensated"}', '0+0.5x60 30+3x60'],
    ],
    evaluations: [
      ['55m', []],
      ['115m', ['{}']],
    ],
  },
  {
    alert: 'CompensationRateHigh',
    // Half compensated, but too few orders (15 in 15 minutes) to call it a spike.
    series: [
      ['order_payments_orders_total{outcome="completed"}', '0+0.5x60'],
      ['order_payments_orders_total{outcome="compensated"}', '0+0.5x60'],
    ],
    evaluations: [['50m', []]],
  },
  {
    alert: 'StripeServerErrors',
    series: [
      ['order_payments_stripe_request_duration_seconds_count{outcome="2xx"}', '0+60x60'],
      ['order_payments_stripe_request_duration_seconds_count{outcome="4xx"}', '0+3x60'],
      // 5xx from 30 min on: 6 of 69 a minute (9%); no answer at all counts the same.
      ['order_payments_stripe_request_duration_seconds_count{outcome="5xx"}', '0x30 0+6x30'],
      ['order_payments_stripe_request_duration_seconds_count{outcome="error"}', '0x60'],
    ],
    evaluations: [
      ['25m', []],
      ['55m', ['{}']],
    ],
  },
  {
    alert: 'RateLimitsPerProcess',
    series: [
      // Present at 0 from the start; Redis stops answering at 30 min for 20 minutes.
      ['order_payments_api_rate_limit_fallback_total{limiter="tenant"}', '0x30 0+4x20 80x30'],
      ['order_payments_api_rate_limit_fallback_total{limiter="ip"}', '0x80'],
    ],
    evaluations: [
      ['25m', []],
      ['40m', ['{limiter="tenant"}']],
      ['75m', []],
    ],
  },
  {
    alert: 'WorkflowTaskFailures',
    series: [
      [
        'temporal_workflow_task_execution_failed{namespace="default",task_queue="order-payments",workflow_type="orderPaymentSaga",failure_reason="NonDeterminismError"}',
        '_x20 1 2 3x40',
      ],
    ],
    evaluations: [
      ['15m', []],
      ['21m', ['{namespace="default",task_queue="order-payments",workflow_type="orderPaymentSaga",failure_reason="NonDeterminismError"}']],
      ['40m', []],
    ],
  },
];

/** GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens. */
function githubAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/* ------------------------------------------------------------------------------------------ */
/* The stack's processes, on free ports, and the demo's orders through them.                   */

let scratch: string;
let db: TestDatabase;
let emulator: StripeEmulator;
let stream: TestStream;
let stack: StackState;
/** What beforeAll started, stopped in reverse by afterAll: the processes first, the scratch folder last. */
const started: { stop: () => Promise<void> }[] = [];
const metricsUrls: Record<string, string> = {};

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'order-payments-ops-'));
  started.push({ stop: () => rm(scratch, { recursive: true, force: true }) });
  db = await createTestDatabase();
  started.push({ stop: () => db.drop() });
  emulator = await startStripeEmulator({ port: 0 });
  started.push({ stop: () => emulator.close() });
  stream = await createTestStream();
  started.push({ stop: () => stream.close() });
  const [workerMetrics, apiPort, apiMetrics, dispatcherMetrics, receiptsMetrics] = [
    await findFreePort(),
    await findFreePort(),
    await findFreePort(),
    await findFreePort(),
    await findFreePort(),
  ];
  const temporalAddress = inject('temporalAddress');
  const taskQueue = `ops-${randomUUID()}`;
  const say = () => undefined;
  const logs = (name: string) => path.join(scratch, `${name}.log`);
  // What the stack hands its worker and its API (src/operations/stack/stack.ts), with a port of their own each.
  const env = {
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: taskQueue,
    DATABASE_URL: db.url,
    STRIPE_SECRET_KEY: STACK_STRIPE_KEY,
    STRIPE_API_BASE: emulator.url,
    TRACE_FILE: path.join(scratch, 'traces.jsonl'),
  };
  const worker = await startWorkerProcess({
    // The run's bundle of the same source, as test workers do: no webpack build of its own.
    env: { ...env, DATABASE_URL: db.serviceUrl('worker'), WORKER_METRICS_PORT: String(workerMetrics), WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath') },
    logFile: logs('worker'),
    say,
  });
  started.push(worker);
  const stripeWebhookSecret = `whsec_${randomBytes(24).toString('base64url')}`;
  const api = await startServiceProcess({
    name: 'the API',
    entry: 'src/api.ts',
    env: {
      ...env,
      DATABASE_URL: db.serviceUrl('api'),
      API_PORT: String(apiPort),
      API_HOST: '127.0.0.1',
      API_METRICS_PORT: String(apiMetrics),
      STRIPE_WEBHOOK_SECRET: stripeWebhookSecret,
    },
    logFile: logs('api'),
    readyMessage: /^api listening on /,
    say,
  });
  started.push(api);
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  emulator.addWebhookEndpoint({ url: `${apiUrl}/webhooks/stripe`, secret: stripeWebhookSecret });
  const messagingEnv = {
    DATABASE_URL: db.url,
    NATS_URL: TEST_NATS_URL,
    OUTBOX_STREAM: stream.stream,
    OUTBOX_SUBJECT_PREFIX: stream.subjectPrefix,
    TRACE_FILE: env.TRACE_FILE,
  };
  const dispatcher = await startServiceProcess({
    name: 'the outbox dispatcher',
    entry: 'src/outbox-dispatcher.ts',
    env: { ...messagingEnv, DATABASE_URL: db.serviceUrl('outbox'), METRICS_PORT: String(dispatcherMetrics) },
    logFile: logs('outbox-dispatcher'),
    readyMessage: 'outbox dispatcher started',
    say,
  });
  started.push(dispatcher);
  const receipts = await startServiceProcess({
    name: 'the receipts consumer',
    entry: 'src/receipts.ts',
    env: { ...messagingEnv, DATABASE_URL: db.serviceUrl('receipts'), METRICS_PORT: String(receiptsMetrics) },
    logFile: logs('receipts'),
    readyMessage: 'receipts consumer started',
    say,
  });
  started.push(receipts);
  Object.assign(metricsUrls, {
    worker: `http://127.0.0.1:${workerMetrics}/metrics`,
    api: `http://127.0.0.1:${apiMetrics}/metrics`,
    'outbox dispatcher': `http://127.0.0.1:${dispatcherMetrics}/metrics`,
    'receipts consumer': `http://127.0.0.1:${receiptsMetrics}/metrics`,
  });
  stack = {
    codecServerUrl: null,
    codecServerToken: null,
    pid: process.pid,
    startedAt: new Date().toISOString(),
    temporalAddress,
    namespace: 'default',
    taskQueue,
    // Only printed in the demo's links; the run's dev server is not asked for its Web UI.
    uiUrl: `http://${temporalAddress}`,
    databaseUrl: db.url,
    postgres: 'external',
    emulatorUrl: emulator.url,
    stripeSecretKey: STACK_STRIPE_KEY,
    apiUrl,
    stripeWebhookSecret,
    natsUrl: TEST_NATS_URL,
    nats: 'external',
    outboxStream: stream.stream,
    outboxSubjectPrefix: stream.subjectPrefix,
    natsSeedFiles: null,
    services: { api: api.pid, outboxDispatcher: dispatcher.pid, receipts: receipts.pid },
  };
}, 240_000);

afterAll(async () => {
  for (const part of started.reverse()) await part.stop();
});

/** The paths the alerts watch that the demo's orders do not take. Resolves once each has ended. */
async function pathsTheDemoDoesNotTake(): Promise<void> {
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const client = new Client({ connection, namespace: stack.namespace, dataConverter: developmentDataConverter() });
  const stripe = createStripeClient({ secretKey: stack.stripeSecretKey, apiBase: stack.emulatorUrl });
  const sku = `ops-${randomUUID().slice(0, 8)}`;
  await setStock(db.pool, sku, 100);
  const order = (suffix: string, overrides: Partial<OrderInput> = {}): OrderInput => ({
    orderId: `${sku}-${suffix}`,
    tenantId: 'default',
    customerId: 'cust-ops',
    amount: 2500,
    currency: 'usd',
    paymentMethod: 'pm_card_visa',
    sku,
    quantity: 1,
    ...overrides,
  });
  try {
    // A Stripe 5xx, retried, on an asynchronous payment whose webhook settles it.
    emulator.setAsyncSettleDelay(300);
    const settling = order('async', { paymentMethod: 'pm_card_async_success' });
    emulator.addFault({ kind: 'fail_before_execution', status: 500, method: 'POST', path: '/v1/payment_intents', orderId: settling.orderId, count: 1 });
    const asyncRun = await startOrder(client, stack.taskQueue, settling);

    // Cancelled while Stripe captures, and refunded by a person before the saga's refund gets
    // through: Stripe refuses the saga's refund, so the order goes in front of a person.
    const refused = order('refund-refused');
    // The capture is slow enough for the cancel to land while it runs (as the demo's), and the
    // saga's refund slow enough for the hand-made one, made as soon as the capture shows, to go first.
    emulator.addFault({ kind: 'latency', method: 'POST', path: '/v1/payment_intents/:id/capture', orderId: refused.orderId, latencyMs: 4_000 });
    emulator.addFault({ kind: 'latency', method: 'POST', path: '/v1/refunds', orderId: refused.orderId, latencyMs: 5_000 });
    const refusedRun = await startOrder(client, stack.taskQueue, refused);
    const started = proto.temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
    await untilActivityPending(refusedRun.handle, (activity) => activity.activityType?.name === 'capturePayment' && activity.state === started, { intervalMs: 100 });
    await refusedRun.handle.cancel();
    const captured = await vi.waitFor(
      async () => {
        const [intent] = (await stripe.paymentIntents.search({ query: `metadata['order_id']:'${refused.orderId}'` })).data;
        if (intent?.status !== 'succeeded') throw new Error(`the capture has not landed yet (${intent?.status ?? 'no PaymentIntent'})`);
        return intent;
      },
      { timeout: 60_000, interval: 50 },
    );
    await stripe.refunds.create({ payment_intent: captured.id });

    // An order through the orders API, and the same request again: a first claim and a replay.
    const apiKey = (await createApiKey(db.pool, 'tenant-ops')).key;
    const body = JSON.stringify({ customerId: 'cust-ops', amount: 1500, currency: 'usd', paymentMethod: 'pm_card_visa', sku, quantity: 1 });
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': `ops-${randomUUID()}` };
    for (const expected of ['first', 'replay']) {
      const response = await fetch(`${stack.apiUrl}/v1/orders`, { method: 'POST', headers, body });
      expect(response.status, `the API's ${expected} answer`).toBe(201);
    }

    // A workflow type no worker of the queue has (one started for a retired version, say): the
    // worker fails its workflow task, which Temporal retries, and the run makes no progress.
    const stray = await client.workflow.start('retiredOrderWorkflow', { taskQueue: stack.taskQueue, workflowId: `${sku}-stray`, args: [] });
    await vi.waitFor(
      async () => {
        const { events } = await stray.fetchHistory();
        expect(events?.some((event) => event.workflowTaskFailedEventAttributes)).toBe(true);
      },
      { timeout: 60_000, interval: 200 },
    );
    await stray.terminate('ops test: the workflow task failure was seen');

    expect((await asyncRun.handle.result()).status).toBe('completed');
    const refusal = await refusedRun.handle.result().catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(WorkflowFailedError);
    const { rows } = await db.pool.query<{ status: string }>('select status from orders where order_id = $1', [refused.orderId]);
    expect(rows[0]?.status).toBe('needs_review');
  } finally {
    await connection.close();
  }
}

/** Each process's scrape, by process. */
async function scrapeAll(): Promise<Record<string, string>> {
  const entries = await Promise.all(Object.entries(metricsUrls).map(async ([name, url]) => [name, await scrape(url)] as const));
  return Object.fromEntries(entries);
}

/** What is missing from the scrapes: a metric no process exports, or a label it never carries. */
function missing(selector: SeriesSelector, scrapes: Record<string, string>): string | null {
  const exporters = Object.entries(scrapes).filter(([, text]) => samples(text, selector.metric).length > 0);
  if (exporters.length === 0) return `${selector.metric}: no process exports it`;
  const labels = new Set(exporters.flatMap(([, text]) => samples(text, selector.metric).flatMap((sample) => Object.keys(sample.labels))));
  const absent = selector.labels.filter((label) => !labels.has(label));
  if (absent.length > 0) return `${selector.metric} (from ${exporters.map(([name]) => name).join(', ')}) has no label ${absent.join(', ')}`;
  return null;
}

describe('every metric the rules and the dashboard name is exported by a running process', () => {
  it("after the demo's orders through the stack's worker, API, outbox dispatcher and receipts consumer", async () => {
    const lines: string[] = [];
    const demoHeld = await runDemo(stack, (line) => lines.push(line));
    expect(demoHeld, lines.join('\n')).toBe(true);
    await pathsTheDemoDoesNotTake();

    const expressions = await namedExpressions();
    const selectors = expressions.flatMap(({ where, expr }) => seriesSelectors(expr).map((selector) => ({ where, selector })));
    expect(selectors.length).toBeGreaterThanOrEqual(expressions.length);
    // The SDK's exporter shows a workflow's metrics once its activation completed: wait for them.
    let scrapes: Record<string, string> = {};
    await vi.waitFor(
        async () => {
          scrapes = await scrapeAll();
          const problems = selectors.map(({ where, selector }) => ({ where, problem: missing(selector, scrapes) })).filter(({ problem }) => problem !== null);
          if (problems.length > 0) throw new Error(problems.map(({ where, problem }) => `${where}: ${problem ?? ''}`).join('\n'));
        },
        { timeout: 30_000, interval: 500 },
      );
    // Each process exports its own: the saga's from the worker, the API's, the outbox's and the receipts'.
    const exportedBy = (prefix: string) => Object.entries(scrapes).filter(([, text]) => text.includes(`\n${prefix}`)).map(([name]) => name);
    expect(exportedBy('order_payments_orders_total')).toEqual(['worker']);
    expect(exportedBy('order_payments_api_http_requests_total')).toEqual(['api']);
    expect(exportedBy('order_payments_outbox_lag_seconds')).toEqual(['outbox dispatcher']);
    expect(exportedBy('order_payments_receipts_messages_total')).toEqual(['receipts consumer']);
  }, 420_000);
});

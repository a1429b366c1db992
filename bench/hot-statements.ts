/**
 * The plans of the hot statements: every statement the saga, the ledger, the orders API, the
 * webhook receiver, the outbox dispatcher, the receipts consumer and the reaper send per order (or
 * per batch), explained against a database (the bench's, seeded with a million finished orders),
 * with a verdict on each: is every table it reads reached through an index? Issue 16: at scale, a
 * hot statement must cost what it costs on an empty database, so none may scan a growing table.
 *
 * The statement texts are not restated here: each is captured from the module that owns it, by
 * calling that module's function with a stand-in client that records the statement and its
 * parameters instead of running them (and answers with canned rows, to reach the statements that
 * follow on the path of interest). Each captured statement is then sent to the real database as
 * `EXPLAIN (FORMAT JSON)`, without ANALYZE, so nothing is written. The only restated statements are
 * the two the ledger's balance trigger runs (migrations/003_ledger.sql), which no TypeScript sends.
 *
 * A sequential scan is accepted only on a table that is really tiny (at most TINY_TABLE_ROWS rows
 * by the planner's statistics, such as inventory or api_keys) and is reported as such.
 */
import type { Pool, PoolClient, QueryResult } from 'pg';
import { reapApiIdempotency } from '../src/api/idempotency/reaper.js';
import { DEFAULT_API_IDEMPOTENCY } from '../src/api/idempotency/settings.js';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  releaseIdempotencyLease,
  type TenantIdempotencyKey as ApiScope,
} from '../src/api/idempotency/api-idempotency-store.js';
import { lookupApiKey } from '../src/api/auth/api-keys.js';
import { CREATE_ORDER_OPERATION } from '../src/api/orders/create-order.js';
import { findTenantOrder } from '../src/api/orders/order-view.js';
import { DEFAULT_KEY_RETENTION_MS } from '../src/activities/deps.js';
import { ActivityId } from '../src/domain/activity-ids.js';
import { workflowIdForOrder, type OrderInput } from '../src/domain/order-input.js';
import {
  countExpiredOpenKeys,
  fenceKey,
  finishKey,
  markKeyProcessing,
  readKey,
  reapExpiredKeys,
  registerKey,
  reopenFencedKey,
  replayFinishedKey,
} from '../src/money/idempotency/activity-idempotency-store.js';
import { deriveIdempotencyKey } from '../src/money/idempotency/idempotency-key.js';
import { allocateStock, releaseStock } from '../src/orders/stock.js';
import { postLedgerTransaction } from '../src/money/ledger/ledger.js';
import { claimInboxMessage, reapInboxMessages } from '../src/messaging/inbox.js';
import { claimCharge, orderLine, orderStatus, recordOrder, setOrderStatus } from '../src/orders/orders.js';
import { announceOrderFailed, announceOrderPaid } from '../src/messaging/outbox/order-events.js';
import { loadOutboxSettings } from '../src/messaging/outbox/outbox-settings.js';
import { claimUnsent, markSent, reapSentRows, recordFailure } from '../src/messaging/outbox/outbox-store.js';
import { insertHold, markHoldCaptured, markHoldReleased } from '../src/money/payments/payment-holds.js';
import { PaymentScope } from '../src/money/payments/payment-protocol.js';
import { applyOrderEvent } from '../src/messaging/receipts/receipts.js';
import { REAPED_TABLES } from '../src/operations/retention/reaper.js';
import { DEFAULT_RETENTION } from '../src/operations/retention/settings.js';
import { reapWebhookEvents, recordHandoff, recordStripeEvent, STRIPE_WEBHOOK_SUBSCRIBER } from '../src/messaging/webhooks/record-stripe-event.js';
import { stripeEventSchema, type StripeEvent } from '../src/messaging/webhooks/stripe-event.js';

/** Who sends the statement. */
export type HotPath = 'saga' | 'ledger' | 'api' | 'webhooks' | 'outbox' | 'receipts' | 'reaper';

/** One table read in a plan. */
export interface PlanScan {
  /** The plan node: Index Scan, Index Only Scan, Bitmap Heap Scan, Tid Scan, Seq Scan, ... */
  node: string;
  relation: string;
  /** The index it reads (for a bitmap heap scan: those of its bitmap index scans), or null. */
  index: string | null;
  /** The table's row count as the planner knows it (pg_class.reltuples, after ANALYZE). */
  tableRows: number;
  /** A sequential scan of a table of at most TINY_TABLE_ROWS rows: accepted, and reported as such. */
  tinySeqScan: boolean;
}

export interface HotStatementPlan {
  name: string;
  path: HotPath;
  /** Where the text comes from: the function it was captured from, or the migration it is restated from. */
  source: string;
  /** The statement, whitespace collapsed. */
  sql: string;
  /** EXPLAIN's text form (costs off), one line per node joined by newlines. */
  plan: string;
  /** Every table the statement reads is reached through an index (or is tiny, see `scans`). */
  indexOnly: boolean;
  scans: PlanScan[];
  /** For a statement that is not index-only and is a known, reported gap: the index it lacks. */
  missingIndex: string | null;
}

/** A sequential scan of a table this small is cheaper than an index probe, and stays so: it does not grow with orders. */
export const TINY_TABLE_ROWS = 1_000;

// ---------------------------------------------------------------------------------------------
// Capturing statements from their owning modules

interface CapturedStatement {
  text: string;
  values: unknown[];
}

type Answer = Partial<Pick<QueryResult, 'rows' | 'rowCount'>>;
type StandIn = Pool & PoolClient;

/**
 * A stand-in for a pool or a client: records each statement (begin, commit and rollback aside) and
 * answers it with the next canned result, else with no rows. It has what `withTransaction` and
 * the store functions use: query, connect, release, on, removeListener.
 */
function recorder(answers: Answer[]): { db: StandIn; statements: CapturedStatement[] } {
  const statements: CapturedStatement[] = [];
  const queue = [...answers];
  const standIn = {
    query(text: string | { text: string }, values?: unknown[]) {
      const sql = typeof text === 'string' ? text : text.text;
      if (/^\s*(begin|commit|rollback)\s*$/i.test(sql)) return Promise.resolve({ rows: [], rowCount: null });
      statements.push({ text: sql, values: values ?? [] });
      return Promise.resolve({ rows: [], rowCount: 0, ...queue.shift() });
    },
    connect: () => Promise.resolve(standIn),
    release: () => undefined,
    on: () => standIn,
    removeListener: () => standIn,
  };
  return { db: standIn as unknown as StandIn, statements };
}

/** What the statements are explained with: one finished order of the database, and a new one. */
interface Sample {
  /** A new order, as the forward path sees it before its rows exist. */
  order: OrderInput;
  runId: string;
  /** A finished (completed) order of the database, for lookups; the new order's when there is none. */
  existing: { orderId: string; runId: string; paymentIntentId: string };
  ledgerTransactionId: number;
  outboxIds: number[];
  apiScope: ApiScope;
  event: StripeEvent;
}

interface StatementSpec {
  path: HotPath;
  /** The owning function, as `module: function`. */
  source: string;
  /** A name for each captured statement, in the order the function sends them; null skips one. */
  names: (string | null)[];
  answers?: Answer[];
  run: (db: StandIn, sample: Sample) => Promise<unknown>;
  /**
   * A gap found by this check and reported (issue 16), not yet fixed by a migration: the index the
   * named statement lacks. Printed only while the statement's plan still needs it.
   */
  missingIndexes?: Record<string, string>;
}

const key = (runId: string, activityId: string) => deriveIdempotencyKey({ runId, activityId });

const SPECS: StatementSpec[] = [
  // The saga's forward path, in order, and its compensations.
  { path: 'saga', source: 'src/orders/orders.ts: recordOrder', names: ['orders.recordOrder'], run: (db, s) => recordOrder(db, s.order, workflowIdForOrder(s.order.orderId)) },
  {
    path: 'saga',
    source: 'src/orders/stock.ts: allocateStock',
    names: ['stock.allocateStock'],
    answers: [{ rows: [{ allocated: true, decremented: true }] }],
    run: (db, s) => allocateStock(db, { idempotencyKey: key(s.runId, ActivityId.reserveStock), orderId: s.order.orderId, sku: s.order.sku, quantity: s.order.quantity }),
  },
  {
    path: 'saga',
    source: 'src/orders/stock.ts: allocateStock (a retried reservation)',
    names: [null, 'stock.allocateStock: replay lookup'],
    answers: [{ rows: [{ allocated: false, decremented: false }] }, { rows: [{ request_hash: '', state: 'allocated' }] }],
    run: (db, s) => allocateStock(db, { idempotencyKey: key(s.existing.runId, ActivityId.reserveStock), orderId: s.existing.orderId, sku: s.order.sku, quantity: 1 }),
  },
  { path: 'saga', source: 'src/orders/orders.ts: setOrderStatus', names: ['orders.setOrderStatus'], run: (db, s) => setOrderStatus(db, s.order.orderId, { status: 'reserved' }) },
  {
    path: 'saga',
    source: 'src/orders/orders.ts: claimCharge',
    names: ['orders.claimCharge'],
    answers: [{ rowCount: 1, rows: [{ previous: null }] }],
    run: (db, s) => claimCharge(db, s.order.orderId, key(s.runId, ActivityId.authorizePayment)),
  },
  {
    path: 'saga',
    source: 'src/money/idempotency/activity-idempotency-store.ts: registerKey',
    names: ['idempotency.registerKey'],
    run: (db, s) => registerKey(db, { scope: PaymentScope.authorize, key: key(s.runId, ActivityId.authorizePayment), requestHash: 'h', retentionMs: DEFAULT_KEY_RETENTION_MS }),
  },
  {
    path: 'saga',
    source: 'src/money/idempotency/activity-idempotency-store.ts: replayFinishedKey',
    names: ['idempotency.replayFinishedKey'],
    run: (db, s) => replayFinishedKey(db, PaymentScope.capture, key(s.existing.runId, ActivityId.capturePayment), 'h'),
  },
  {
    path: 'saga',
    source: 'src/money/idempotency/activity-idempotency-store.ts: readKey',
    names: ['idempotency.readKey'],
    run: (db, s) => readKey(db, PaymentScope.authorize, key(s.existing.runId, ActivityId.authorizePayment)),
  },
  {
    path: 'saga',
    source: 'src/money/idempotency/activity-idempotency-store.ts: finishKey',
    names: ['idempotency.finishKey'],
    run: (db, s) => finishKey(db, PaymentScope.authorize, key(s.runId, ActivityId.authorizePayment), 'completed', { status: 'requires_capture' }),
  },
  {
    path: 'saga',
    source: 'src/money/idempotency/activity-idempotency-store.ts: markKeyProcessing',
    names: ['idempotency.markKeyProcessing'],
    run: (db, s) => markKeyProcessing(db, PaymentScope.authorize, key(s.runId, ActivityId.authorizePayment), { status: 'processing' }),
  },
  {
    path: 'saga',
    source: 'src/money/idempotency/activity-idempotency-store.ts: fenceKey',
    names: ['idempotency.fenceKey'],
    answers: [{ rows: [{ state: 'failed', request_hash: 'fenced', result: {}, attempts: 0, created_at: new Date() }] }],
    run: (db, s) => fenceKey(db, { scope: PaymentScope.capture, key: key(s.runId, ActivityId.capturePayment), retentionMs: DEFAULT_KEY_RETENTION_MS, result: { fenced: true } }),
  },
  {
    path: 'saga',
    source: 'src/money/idempotency/activity-idempotency-store.ts: reopenFencedKey',
    names: ['idempotency.reopenFencedKey'],
    run: (db, s) => reopenFencedKey(db, PaymentScope.capture, key(s.runId, ActivityId.capturePayment), { status: 'succeeded' }),
  },
  {
    path: 'saga',
    source: 'src/money/payments/payment-holds.ts: insertHold',
    names: ['holds.insertHold'],
    run: (db, s) => insertHold(db, { orderId: s.order.orderId, paymentIntentId: 'pi_new', amountAuthorized: s.order.amount, currency: s.order.currency, captureBefore: 1_900_000_000 }),
  },
  { path: 'saga', source: 'src/money/payments/payment-holds.ts: markHoldCaptured', names: ['holds.markHoldCaptured'], run: (db, s) => markHoldCaptured(db, s.existing.paymentIntentId, s.order.amount) },
  { path: 'saga', source: 'src/money/payments/payment-holds.ts: markHoldReleased', names: ['holds.markHoldReleased'], run: (db, s) => markHoldReleased(db, s.existing.paymentIntentId, 'voided') },
  {
    path: 'saga',
    source: 'src/messaging/outbox/order-events.ts: announceOrderPaid',
    names: ['outbox.announceOrderPaid'],
    run: (db, s) => announceOrderPaid(db, s.order.orderId, { amountMinor: s.order.amount, currency: s.order.currency, paymentIntentId: 'pi_new' }),
  },
  { path: 'saga', source: 'src/messaging/outbox/order-events.ts: announceOrderFailed', names: ['outbox.announceOrderFailed'], run: (db, s) => announceOrderFailed(db, s.order.orderId) },
  {
    path: 'saga',
    source: 'src/orders/stock.ts: releaseStock',
    names: ['stock.releaseStock', 'stock.releaseStock: return the units'],
    answers: [{ rows: [{ tenant_id: 'seed-tenant-0', sku: 'seed-sku-0', quantity: 1, was_allocated: true }] }],
    run: (db, s) =>
      releaseStock(db, {
        allocationKey: key(s.runId, ActivityId.reserveStock),
        releaseKey: key(s.runId, ActivityId.releaseStock),
        orderId: s.order.orderId,
        tenantId: s.order.tenantId,
        sku: s.order.sku,
        quantity: s.order.quantity,
      }),
  },
  { path: 'saga', source: 'src/orders/orders.ts: orderLine', names: ['orders.orderLine'], run: (db, s) => orderLine(db, s.existing.orderId) },
  { path: 'saga', source: 'src/orders/orders.ts: orderStatus', names: ['orders.orderStatus'], run: (db, s) => orderStatus(db, s.existing.orderId) },

  // The ledger: the capture's charge (and the refund's reversal, the same statement), a replay, a duplicate.
  {
    path: 'ledger',
    source: 'src/money/ledger/ledger.ts: postLedgerTransaction',
    names: ['ledger.postLedgerTransaction', 'ledger.postLedgerTransaction: replay lookup', 'ledger.postLedgerTransaction: duplicate blocker'],
    run: (db, s) =>
      postLedgerTransaction(db, {
        orderId: s.order.orderId,
        kind: 'charge',
        amountMinor: s.order.amount,
        currency: s.order.currency,
        stripeObjectId: 'pi_new',
        idempotencyKey: key(s.runId, ActivityId.capturePayment),
      }),
  },

  // The orders API: the bearer check, the idempotency record, GET /v1/orders/:id.
  { path: 'api', source: 'src/api/auth/api-keys.ts: lookupApiKey', names: ['api.lookupApiKey'], run: (db) => lookupApiKey(db, 'opk_bench_key_that_is_not_stored') },
  {
    path: 'api',
    source: 'src/api/idempotency/api-idempotency-store.ts: claimIdempotencyKey',
    names: ['apiIdempotency.claim: insert', 'apiIdempotency.claim: lock the record', 'apiIdempotency.claim: tombstone'],
    answers: [{ rowCount: 1 }, { rows: [{ request_hash: 'h', state: 'pending', status_code: null, response_body: null, resource_id: 'ord_new', lease_left_ms: 30_000 }] }, { rows: [] }],
    run: (db, s) => claimIdempotencyKey(db, { ...s.apiScope, key: 'bench-new-key' }, claimRequest()),
  },
  {
    path: 'api',
    source: 'src/api/idempotency/api-idempotency-store.ts: claimIdempotencyKey (an expired lease)',
    names: [null, null, 'apiIdempotency.claim: take over the lease'],
    answers: [{ rowCount: 0 }, { rows: [{ request_hash: 'h', state: 'pending', status_code: null, response_body: null, resource_id: 'ord_new', lease_left_ms: -1 }] }],
    run: (db, s) => claimIdempotencyKey(db, s.apiScope, claimRequest()),
  },
  {
    path: 'api',
    source: 'src/api/idempotency/api-idempotency-store.ts: completeIdempotencyKey',
    names: ['apiIdempotency.complete'],
    answers: [{ rows: [{ status_code: 201, response_body: {} }] }],
    run: (db, s) => completeIdempotencyKey(db, s.apiScope, { state: 'completed', statusCode: 201, body: {} }),
  },
  { path: 'api', source: 'src/api/idempotency/api-idempotency-store.ts: releaseIdempotencyLease', names: ['apiIdempotency.releaseLease'], run: (db, s) => releaseIdempotencyLease(db, s.apiScope) },
  {
    path: 'api',
    source: 'src/api/orders/order-view.ts: findTenantOrder',
    names: ['api.findTenantOrder: order', 'api.findTenantOrder: progress', 'api.findTenantOrder: refunds'],
    answers: [{ rows: [{ order_id: 'x', request: {}, created_at: new Date() }] }, { rows: [{ status: 'completed', status_reason: null, payment_intent_id: null, refund_id: null }] }],
    run: (db, s) => findTenantOrder(db, s.apiScope.tenantId, s.existing.orderId),
  },

  // Stripe's webhooks into the inbox.
  {
    path: 'webhooks',
    source: 'src/messaging/webhooks/record-stripe-event.ts: recordStripeEvent',
    names: ['webhooks.recordStripeEvent: inbox', 'webhooks.recordStripeEvent: event', 'webhooks.recordStripeEvent: object state', 'webhooks.recordStripeEvent: applied'],
    answers: [{ rowCount: 1 }, { rowCount: 1 }, { rowCount: 1 }, { rowCount: 1 }],
    run: (db, s) => recordStripeEvent(db, s.event),
  },
  { path: 'webhooks', source: 'src/messaging/webhooks/record-stripe-event.ts: recordHandoff', names: ['webhooks.recordHandoff'], run: (db, s) => recordHandoff(db, s.event.id, null) },

  // The outbox dispatcher and the receipts consumer.
  { path: 'outbox', source: 'src/messaging/outbox/outbox-store.ts: claimUnsent', names: ['outbox.claimUnsent'], run: (db) => claimUnsent(db, loadOutboxSettings({}).batchSize) },
  { path: 'outbox', source: 'src/messaging/outbox/outbox-store.ts: markSent', names: ['outbox.markSent'], run: (db, s) => markSent(db, s.outboxIds) },
  { path: 'outbox', source: 'src/messaging/outbox/outbox-store.ts: recordFailure', names: ['outbox.recordFailure'], run: (db, s) => recordFailure(db, s.outboxIds[0] ?? 1, 'timeout') },
  {
    path: 'receipts',
    source: 'src/messaging/receipts/receipts.ts: applyOrderEvent',
    names: ['inbox.claimInboxMessage (receipts)', 'receipts.recordReceipt'],
    answers: [{ rowCount: 1 }],
    run: (db, s) =>
      applyOrderEvent(db, String(s.outboxIds[0] ?? 1), {
        event_type: 'order.paid',
        order_id: s.existing.orderId,
        status: 'paid',
        amount_minor: s.order.amount,
        currency: s.order.currency,
        payment_intent_id: s.existing.paymentIntentId,
        refund_id: null,
        reason: null,
        occurred_at: new Date().toISOString(),
      }),
  },
  { path: 'receipts', source: 'src/messaging/inbox.ts: claimInboxMessage', names: ['inbox.claimInboxMessage'], run: (db, s) => claimInboxMessage(db, 'receipts', String(s.outboxIds[0] ?? 1)) },

  // The reaper's batches (src/operations/retention/reaper.ts) and the API's (src/api.ts), at their default horizons.
  { path: 'reaper', source: 'src/money/idempotency/activity-idempotency-store.ts: reapExpiredKeys', names: ['reaper.activity_idempotency'], run: (db) => reapExpiredKeys(db, DEFAULT_RETENTION.batchSize) },
  { path: 'reaper', source: 'src/money/idempotency/activity-idempotency-store.ts: countExpiredOpenKeys', names: ['reaper.countExpiredOpenKeys'], run: (db) => countExpiredOpenKeys(db) },
  {
    path: 'reaper',
    source: 'src/messaging/outbox/outbox-store.ts: reapSentRows',
    names: ['reaper.outbox'],
    run: (db) => reapSentRows(db, DEFAULT_RETENTION.outboxSentMs, DEFAULT_RETENTION.batchSize),
  },
  {
    path: 'reaper',
    source: 'src/messaging/webhooks/record-stripe-event.ts: reapWebhookEvents',
    names: ['reaper.stripe_webhook_events'],
    run: (db) => reapWebhookEvents(db, DEFAULT_RETENTION.inboxMs, DEFAULT_RETENTION.batchSize),
  },
  {
    path: 'reaper',
    source: 'src/messaging/inbox.ts: reapInboxMessages',
    names: ['reaper.processed_messages'],
    run: (db) => reapInboxMessages(db, DEFAULT_RETENTION.inboxMs, DEFAULT_RETENTION.batchSize, [STRIPE_WEBHOOK_SUBSCRIBER]),
  },
  {
    path: 'reaper',
    source: 'src/api/idempotency/reaper.ts: reapApiIdempotency',
    names: ['reaper.api_idempotency', 'reaper.api_idempotency_tombstones'],
    run: (db) => reapApiIdempotency(db, { tombstoneMs: DEFAULT_API_IDEMPOTENCY.tombstoneMs }),
  },
];

function claimRequest() {
  return { requestHash: 'h', resourceType: 'order', proposedResourceId: 'ord_new', leaseMs: DEFAULT_API_IDEMPOTENCY.leaseMs, retentionMs: DEFAULT_API_IDEMPOTENCY.retentionMs };
}

/**
 * The ledger's balance check (ledger_check_balance in migrations/003_ledger.sql) runs these two at
 * every commit that wrote ledger rows, once per inserted row. PL/pgSQL sends them, not TypeScript,
 * so they are restated here from the migration.
 */
const TRIGGER_STATEMENTS: { name: string; text: string }[] = [
  { name: 'ledger_check_balance: the transaction', text: 'select amount_minor from ledger_transactions where id = $1' },
  {
    name: 'ledger_check_balance: its postings',
    text: `select coalesce(sum(amount_minor) filter (where direction = 'debit'), 0),
                  coalesce(sum(amount_minor) filter (where direction = 'credit'), 0)
             from ledger_postings where transaction_id = $1`,
  },
];

/** The statements the specs capture, named, in the order they are listed. */
interface NamedStatement {
  name: string;
  path: HotPath;
  source: string;
  statement: CapturedStatement;
  missingIndex?: string;
}

async function captureStatements(sample: Sample): Promise<NamedStatement[]> {
  const captured: NamedStatement[] = [];
  for (const spec of SPECS) {
    const { db, statements } = recorder(spec.answers ?? []);
    // The canned answers steer the function down one path; where they end, it may throw (a
    // conflict, an unknown row). What it sent until then is what is wanted.
    await spec.run(db, sample).catch(() => undefined);
    spec.names.forEach((name, index) => {
      const statement = statements[index];
      if (name === null) return;
      if (!statement) throw new Error(`hot statements: ${spec.source} no longer sends the statement named '${name}'; update bench/hot-statements.ts`);
      const missingIndex = spec.missingIndexes?.[name];
      captured.push({ name, path: spec.path, source: spec.source, statement, ...(missingIndex && { missingIndex }) });
    });
  }
  const ledgerId = sample.ledgerTransactionId;
  for (const statement of TRIGGER_STATEMENTS) {
    captured.push({ name: statement.name, path: 'ledger', source: 'migrations/003_ledger.sql: ledger_check_balance (restated)', statement: { text: statement.text, values: [ledgerId] } });
  }
  return captured;
}

/** Tables rows are deleted from in batches: the reaper's (src/operations/retention/reaper.ts) and the API's (src/api/idempotency/reaper.ts). */
const DELETED_FROM: readonly string[] = [...REAPED_TABLES, 'api_idempotency', 'api_idempotency_tombstones'];

/**
 * Deleting a row that another table references makes PostgreSQL check that foreign key once per
 * deleted row, with a statement of its own (select 1 from only <referencing> x where <column> = $1
 * for key share of x); without an index on the referencing column each check reads the whole
 * referencing table, so a reaper batch of 1,000 rows reads it 1,000 times. These checks are made
 * from the catalog, for every single-column foreign key into a table that is reaped.
 */
async function foreignKeyChecks(client: PoolClient): Promise<NamedStatement[]> {
  const { rows } = await client.query<{ name: string; referencing: string; column: string; referenced: string; referenced_column: string }>(
    `select c.conname as name, c.conrelid::regclass::text as referencing, quote_ident(a.attname) as column,
            c.confrelid::regclass::text as referenced, quote_ident(ra.attname) as referenced_column
       from pg_constraint c
       join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
       join pg_attribute ra on ra.attrelid = c.confrelid and ra.attnum = c.confkey[1]
      where c.contype = 'f' and cardinality(c.conkey) = 1
        and c.confrelid = any(array(select to_regclass(t) from unnest($1::text[]) t))
      order by c.conname`,
    [DELETED_FROM],
  );
  const checks: NamedStatement[] = [];
  for (const fk of rows) {
    // Identifiers as the catalog quotes them; the value is one the referenced table holds.
    const { rows: values } = await client.query<{ value: string }>(`select ${fk.referenced_column}::text as value from ${fk.referenced} limit 1`);
    checks.push({
      name: `foreign-key check of ${fk.referencing}.${fk.column}, per row deleted from ${fk.referenced}`,
      path: 'reaper',
      source: `PostgreSQL's check of ${fk.name} (restated from the catalog)`,
      statement: { text: `select 1 from only ${fk.referencing} x where ${fk.column} = $1 for key share of x`, values: [values[0]?.value ?? 'none'] },
      missingIndex: `create index ${fk.referencing}_${fk.column}_idx on ${fk.referencing} (${fk.column})`,
    });
  }
  return checks;
}

// ---------------------------------------------------------------------------------------------
// The sample, and the plans

/** A new order, and one finished order of the database (with its ledger, outbox, API record and a webhook event) when it has one. */
async function sampleOf(pool: Pool): Promise<Sample> {
  const { rows } = await pool.query<{
    order_id: string | null;
    charge_key: string | null;
    payment_intent_id: string | null;
    ledger_id: number | null;
    outbox_id: number | null;
    tenant_id: string | null;
    api_key: string | null;
    event: unknown;
  }>(
    // A bench-side read of whatever rows exist (each `limit 1`), to explain with real values.
    `select o.order_id, o.charge_key, o.payment_intent_id,
            (select id from ledger_transactions limit 1) as ledger_id,
            (select id from outbox limit 1) as outbox_id,
            a.tenant_id, a.idempotency_key as api_key,
            (select jsonb_build_object('id', event_id, 'object', 'event', 'type', event_type, 'created', event_created,
                    'data', jsonb_build_object('object', jsonb_build_object('id', object_id, 'object', object_type, 'status', object_status,
                    'metadata', case when order_id is not null then jsonb_build_object('order_id', order_id) end)))
               from stripe_webhook_events where event_type = 'payment_intent.succeeded' limit 1) as event
       from (select 1) one
       left join lateral (select order_id, charge_key, payment_intent_id from orders where status = 'completed' and charge_key is not null limit 1) o on true
       left join lateral (select tenant_id, idempotency_key from api_idempotency limit 1) a on true`,
  );
  const found = rows[0];
  const runId = '5f0b2c1e-3d4a-4b6c-8e9f-0a1b2c3d4e5f';
  const order: OrderInput = {
    orderId: 'ord_bench_hot_statements_new',
    tenantId: 'seed-tenant-0',
    customerId: 'cust-bench',
    amount: 2500,
    currency: 'usd',
    paymentMethod: 'pm_card_visa',
    sku: 'seed-sku-0',
    quantity: 1,
  };
  const existingRunId = found?.charge_key?.split('/')[0] ?? runId;
  const parsedEvent = stripeEventSchema.safeParse(found?.event);
  const event: StripeEvent = parsedEvent.success
    ? parsedEvent.data
    : stripeEventSchema.parse({
        id: 'evt_bench_hot_statements',
        object: 'event',
        type: 'payment_intent.succeeded',
        created: 1_800_000_000,
        data: { object: { id: 'pi_new', object: 'payment_intent', status: 'succeeded', metadata: { order_id: order.orderId } } },
      });
  return {
    order,
    runId,
    existing: { orderId: found?.order_id ?? order.orderId, runId: existingRunId, paymentIntentId: found?.payment_intent_id ?? 'pi_new' },
    ledgerTransactionId: found?.ledger_id ?? 1,
    outboxIds: [found?.outbox_id ?? 1],
    apiScope: { tenantId: found?.tenant_id ?? 'bench-tenant', operation: CREATE_ORDER_OPERATION, key: found?.api_key ?? 'bench-key' },
    event,
  };
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

const INDEX_SCANS = new Set(['Index Scan', 'Index Only Scan', 'Bitmap Heap Scan', 'Tid Scan', 'Tid Range Scan']);
const TABLE_SCANS = new Set([...INDEX_SCANS, 'Seq Scan', 'Sample Scan']);

/** Every node that reads a table, with the index it reads (a bitmap heap scan's come from its bitmap index scans). */
function scansOf(node: PlanNode, into: Omit<PlanScan, 'tableRows' | 'tinySeqScan'>[] = []) {
  const type = node['Node Type'];
  if (TABLE_SCANS.has(type) && node['Relation Name']) {
    const bitmapIndexes = type === 'Bitmap Heap Scan' ? bitmapIndexesOf(node) : [];
    into.push({ node: type, relation: node['Relation Name'], index: node['Index Name'] ?? (bitmapIndexes.length > 0 ? bitmapIndexes.join(' + ') : null) });
  }
  for (const child of node.Plans ?? []) scansOf(child, into);
  return into;
}

function bitmapIndexesOf(node: PlanNode): string[] {
  const own = node['Node Type'] === 'Bitmap Index Scan' && node['Index Name'] ? [node['Index Name']] : [];
  return [...own, ...(node.Plans ?? []).flatMap(bitmapIndexesOf)];
}

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * EXPLAINs (FORMAT JSON, no ANALYZE: nothing runs, nothing is written) each hot statement against
 * the database behind `pool`, with the planner's settings as they are (enable_seqscan on), and says
 * whether each reaches every table it reads through an index. Representative values come from one
 * finished order of the database when it has one (`seedFinishedOrders`), else from made-up IDs.
 */
export async function explainHotStatements(pool: Pool): Promise<HotStatementPlan[]> {
  const sample = await sampleOf(pool);
  const plans: HotStatementPlan[] = [];
  const client = await pool.connect();
  try {
    const captured = [...(await captureStatements(sample)), ...(await foreignKeyChecks(client))];
    for (const { name, path, source, statement, missingIndex } of captured) {
      const json = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`explain (format json) ${statement.text}`, statement.values);
      const root = json.rows[0]?.['QUERY PLAN'][0]?.Plan;
      if (!root) throw new Error(`hot statements: EXPLAIN of ${name} returned no plan`);
      const text = await client.query<{ 'QUERY PLAN': string }>(`explain (costs off) ${statement.text}`, statement.values);
      const found = scansOf(root);
      const sizes = await tableRows(client, [...new Set(found.map((scan) => scan.relation))]);
      const scans = found.map((scan) => {
        const rows = sizes.get(scan.relation) ?? 0;
        return { ...scan, tableRows: rows, tinySeqScan: scan.node === 'Seq Scan' && rows <= TINY_TABLE_ROWS };
      });
      const indexOnly = scans.every((scan) => INDEX_SCANS.has(scan.node) || scan.tinySeqScan);
      plans.push({
        name,
        path,
        source,
        sql: collapse(statement.text),
        plan: text.rows.map((row) => row['QUERY PLAN']).join('\n'),
        indexOnly,
        scans,
        missingIndex: indexOnly ? null : (missingIndex ?? null),
      });
    }
  } finally {
    client.release();
  }
  return plans;
}

/** The planner's row counts (reltuples; 0 for a table never analyzed) of these tables. */
async function tableRows(client: PoolClient, relations: string[]): Promise<Map<string, number>> {
  if (relations.length === 0) return new Map();
  const { rows } = await client.query<{ relname: string; rows: number }>(
    `select relname, greatest(reltuples, 0)::float8 as rows from pg_class where oid = any(array(select to_regclass(r) from unnest($1::text[]) r))`,
    [relations],
  );
  return new Map(rows.map((row) => [row.relname, row.rows]));
}

/** The plans as the bench prints them: a verdict line per statement, then its plan, indented. */
export function formatHotStatementPlans(plans: HotStatementPlan[]): string {
  return plans
    .map((plan) => {
      const tiny = plan.scans.filter((scan) => scan.tinySeqScan).map((scan) => `${scan.relation}, ${scan.tableRows} rows`);
      const seq = plan.scans.filter((scan) => !INDEX_SCANS.has(scan.node) && !scan.tinySeqScan).map((scan) => `${scan.node} on ${scan.relation}, ${scan.tableRows} rows`);
      const verdict = plan.indexOnly
        ? tiny.length > 0
          ? `index scans (a seq scan of tiny ${[...new Set(tiny)].join('; ')})`
          : 'index scans'
        : `NOT ALL INDEX SCANS: ${seq.join('; ')}${plan.missingIndex ? `; missing: ${plan.missingIndex}` : ''}`;
      return `${plan.name} [${plan.path}]: ${verdict}\n${plan.plan.replace(/^/gm, '    ')}`;
    })
    .join('\n');
}

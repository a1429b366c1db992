// The flat-cost-at-scale seed (bench/scale-seed.ts) and the hot statements' plans
// (bench/hot-statements.ts), on a throwaway database of 2,000 seeded orders: the rows are the
// ones finished sagas leave (the real modules read them, and answer retries from them, as the
// saga's outcomes), the ledger balances, and every hot statement reaches its tables by an index.
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimIdempotencyKey } from '../../src/api/idempotency/api-idempotency-store.js';
import { reapApiIdempotency } from '../../src/api/idempotency/reaper.js';
import { CREATE_ORDER_OPERATION, orderResponseBody, type OrderRequest } from '../../src/api/orders/create-order.js';
import { createThrowawayDatabase, type ThrowawayDatabase } from '../../src/operations/chaos/throwaway-database.js';
import { withTransaction } from '../../src/platform/db/transaction.js';
import { ActivityId } from '../../src/domain/activity-ids.js';
import { workflowIdForOrder, type OrderInput } from '../../src/domain/order-input.js';
import { deriveIdempotencyKey } from '../../src/money/idempotency/idempotency-key.js';
import { requestHash } from '../../src/money/idempotency/request-hash.js';
import { AllocationReleasedError } from '../../src/domain/failures.js';
import { allocateStock } from '../../src/orders/stock.js';
import { LedgerAccount } from '../../src/money/ledger/accounts.js';
import { postLedgerTransaction } from '../../src/money/ledger/ledger.js';
import { orderEventSchema } from '../../src/messaging/order-event.js';
import { recordOrder } from '../../src/orders/orders.js';
import { openHoldsOfFinishedOrders } from '../../src/money/payments/payment-holds.js';
import { registerAuthorization, registerCapture, registerRefund, registerVoid, refundRequest } from '../../src/money/payments/payment-protocol.js';
import { reapExpired } from '../../src/operations/retention/reaper.js';
import { DEFAULT_RETENTION } from '../../src/operations/retention/settings.js';
import { projectStoredEvent, type StoredEventFields } from '../../src/messaging/webhooks/stripe-event.js';
import { STORED_EVENT_COLUMNS } from '../support/webhooks.js';
import { explainHotStatements, type HotStatementPlan } from '../../bench/hot-statements.js';
import { outcomeCounts, seedFinishedOrders, SEEDED_TABLES, type SeedSummary } from '../../bench/scale-seed.js';

const ORDERS = 2_000;

let db: ThrowawayDatabase;
let summary: SeedSummary;

beforeAll(async () => {
  db = await createThrowawayDatabase({ label: 'scale_seed_test', serverUrl: process.env.TEST_DATABASE_ADMIN_URL });
  // Batches smaller than the count, two at once: the path a million-order seed takes.
  summary = await seedFinishedOrders(db.pool, ORDERS, { batchSize: 300, connections: 2 });
});
afterAll(() => db.drop());

interface SeededOrder {
  order_id: string;
  status: string;
  status_reason: string | null;
  customer_id: string;
  amount_minor: number;
  currency: string;
  sku: string;
  quantity: number;
  request_hash: string;
  charge_key: string;
  payment_intent_id: string | null;
  refund_id: string | null;
  workflow_id: string;
  request: OrderRequest;
  tenant_id: string;
  api_key: string;
  api_hash: string;
  response_body: unknown;
}

async function seededOrders(): Promise<SeededOrder[]> {
  const { rows } = await db.pool.query<SeededOrder>(
    `select o.*, a.request, a.tenant_id, i.idempotency_key as api_key, i.request_hash as api_hash, i.response_body
       from orders o join api_orders a using (order_id) join api_idempotency i on i.resource_id = o.order_id
      order by o.created_at`,
  );
  return rows;
}

const runIdOf = (order: SeededOrder) => order.charge_key.split('/')[0] ?? '';
const keyOf = (order: SeededOrder, activityId: string) => deriveIdempotencyKey({ runId: runIdOf(order), activityId });
const inputOf = (order: SeededOrder): OrderInput => ({ orderId: order.order_id, tenantId: order.tenant_id, ...order.request });
const outcomeOf = (order: SeededOrder) => (order.status !== 'compensated' ? order.status : order.refund_id ? 'refunded' : 'voided');

/** The authorization's Stripe parameters, as src/activities/authorization.ts builds them for this order. */
function authorizationParams(order: SeededOrder): Stripe.PaymentIntentCreateParams {
  return {
    amount: order.amount_minor,
    currency: order.currency,
    payment_method: order.request.paymentMethod,
    confirm: true,
    capture_method: 'manual',
    automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    expand: ['latest_charge'],
    description: `Order ${order.order_id}`,
    metadata: { order_id: order.order_id, customer_id: order.customer_id, workflow_id: order.workflow_id, run_id: runIdOf(order), activity_id: ActivityId.authorizePayment },
  };
}

describe('seedFinishedOrders', () => {
  it('inserts, per table, the rows each outcome leaves, and says so', async () => {
    const outcomes = outcomeCounts(ORDERS);
    expect(outcomes).toEqual({ completed: 1_800, declined: 80, voided: 60, refunded: 60 });
    const captured = outcomes.completed + outcomes.refunded;
    const outboxRows = captured + outcomes.refunded + outcomes.declined + outcomes.voided + outcomes.refunded;
    const webhookEvents = 5 * outcomes.completed + 7 * outcomes.refunded + 4 * outcomes.voided + 3 * outcomes.declined;
    expect(summary).toMatchObject({
      orders: ORDERS,
      outcomes,
      batches: 7,
      rows: {
        orders: ORDERS,
        stock_allocations: ORDERS,
        // Every seeded tenant stocks every seeded SKU: 64 SKUs, 8 tenants.
        inventory: 64 * 8,
        activity_idempotency: ORDERS + captured + outcomes.voided + outcomes.refunded,
        payment_holds: ORDERS - outcomes.declined,
        ledger_transactions: captured + outcomes.refunded,
        ledger_postings: 2 * (captured + outcomes.refunded),
        outbox: outboxRows,
        receipts: outboxRows,
        processed_messages: outboxRows + webhookEvents,
        stripe_webhook_events: webhookEvents,
        stripe_object_states: ORDERS + outcomes.refunded,
        api_keys: 8,
        api_idempotency: ORDERS,
        api_orders: ORDERS,
      },
    });
    for (const table of SEEDED_TABLES) {
      const { rows } = await db.pool.query<{ count: number }>(`select count(*)::int as count from ${table}`);
      expect({ table, count: rows[0]?.count }).toEqual({ table, count: summary.rows[table] });
    }
    const statuses = await db.pool.query<{ status: string; count: number }>('select status, count(*)::int as count from orders group by status order by status');
    expect(statuses.rows).toEqual([
      { status: 'compensated', count: outcomes.voided + outcomes.refunded },
      { status: 'completed', count: outcomes.completed },
      { status: 'declined', count: outcomes.declined },
    ]);
    expect(summary.databaseBytes).toBeGreaterThan(0);
  });

  it('leaves a ledger whose every transaction balances, at its amount, and whose accounts equal captures less refunds', async () => {
    const unbalanced = await db.pool.query(
      `select t.id from ledger_transactions t left join ledger_postings p on p.transaction_id = t.id
        group by t.id, t.amount_minor
       having coalesce(sum(p.amount_minor) filter (where p.direction = 'debit'), 0) <> t.amount_minor
           or coalesce(sum(p.amount_minor) filter (where p.direction = 'credit'), 0) <> t.amount_minor`,
    );
    expect(unbalanced.rows).toEqual([]);
    const { rows } = await db.pool.query<{ balance: number; expected: number }>(
      `select (select sum(case direction when 'debit' then amount_minor else -amount_minor end) from ledger_postings where account = $1)::bigint as balance,
              (select sum(case kind when 'charge' then amount_minor else -amount_minor end) from ledger_transactions)::bigint as expected`,
      [LedgerAccount.StripeBalance],
    );
    expect(rows[0]?.balance).toBe(rows[0]?.expected);
    expect(rows[0]?.balance).toBeGreaterThan(0);
  });

  it("holds the invariants our own records can show: every order ended, its stock kept or released once, no hold left open", async () => {
    // The invariant checker (src/operations/reconcile) reads Stripe's side too, which a seed has not got: it
    // would report every seeded capture as missing there. These are its checks on our side.
    expect(await openHoldsOfFinishedOrders(db.pool, null)).toEqual([]);
    const allocations = await db.pool.query<{ status: string; state: string; count: number }>(
      `select o.status, a.state, count(*)::int as count from orders o join stock_allocations a using (order_id)
        group by o.status, a.state order by o.status, a.state`,
    );
    expect(allocations.rows).toEqual([
      { status: 'compensated', state: 'released', count: summary.outcomes.voided + summary.outcomes.refunded },
      { status: 'completed', state: 'allocated', count: summary.outcomes.completed },
      { status: 'declined', state: 'released', count: summary.outcomes.declined },
    ]);
    const unfinished = await db.pool.query(
      `select order_id from orders where status not in ('completed', 'declined', 'compensated', 'needs_review')
           or (status <> 'completed' and status_reason is null)`,
    );
    expect(unfinished.rows).toEqual([]);
  });

  it('writes every request hash as requestHash makes it of the request its rows describe', async () => {
    const orders = await seededOrders();
    expect(orders).toHaveLength(ORDERS);
    const keys = new Map(
      (await db.pool.query<{ scope: string; idempotency_key: string; request_hash: string }>('select scope, idempotency_key, request_hash from activity_idempotency')).rows.map(
        (row) => [`${row.scope} ${row.idempotency_key}`, row.request_hash],
      ),
    );
    const ledger = new Map(
      (await db.pool.query<{ idempotency_key: string; request_hash: string }>('select idempotency_key, request_hash from ledger_transactions')).rows.map((row) => [
        row.idempotency_key,
        row.request_hash,
      ]),
    );
    const stock = new Map(
      (await db.pool.query<{ idempotency_key: string; request_hash: string }>('select idempotency_key, request_hash from stock_allocations')).rows.map((row) => [
        row.idempotency_key,
        row.request_hash,
      ]),
    );
    for (const order of orders) {
      const outcome = outcomeOf(order);
      const input = inputOf(order);
      expect(order.workflow_id).toBe(workflowIdForOrder(order.order_id));
      expect(order.request_hash).toBe(requestHash(input));
      expect(order.api_hash).toBe(requestHash(order.request));
      expect(stock.get(keyOf(order, ActivityId.reserveStock))).toBe(requestHash({ orderId: order.order_id, sku: order.sku, quantity: order.quantity }));
      expect(keys.get(`stripe.authorize ${keyOf(order, ActivityId.authorizePayment)}`)).toBe(requestHash(authorizationParams(order)));
      if (outcome === 'declined') continue;
      const pi = order.payment_intent_id ?? '';
      expect(pi).toMatch(/^pi_/);
      if (outcome === 'voided') {
        expect(keys.get(`stripe.void ${keyOf(order, ActivityId.voidAuthorization)}`)).toBe(requestHash({ paymentIntentId: pi }));
        continue;
      }
      const captureKey = keyOf(order, ActivityId.capturePayment);
      expect(keys.get(`stripe.capture ${captureKey}`)).toBe(requestHash({ paymentIntentId: pi, amountToCapture: order.amount_minor }));
      expect(ledger.get(captureKey)).toBe(
        requestHash({ orderId: order.order_id, kind: 'charge', amountMinor: order.amount_minor, currency: order.currency, stripeObjectId: pi }),
      );
      if (outcome !== 'refunded') continue;
      const refundKey = keyOf(order, ActivityId.refundCapture);
      const capture = { paymentIntentId: pi, amountCaptured: order.amount_minor, currency: order.currency, status: 'succeeded' as const };
      expect(keys.get(`stripe.refund ${refundKey}`)).toBe(requestHash(refundRequest(capture)));
      expect(ledger.get(refundKey)).toBe(
        requestHash({ orderId: order.order_id, kind: 'refund', amountMinor: order.amount_minor, currency: order.currency, stripeObjectId: order.refund_id }),
      );
    }
  });

  it("is answered by the real modules as the sagas' outcomes: a retry of any step replays, nothing is applied twice", async () => {
    const orders = await seededOrders();
    const sample = ['completed', 'declined', 'voided', 'refunded'].flatMap((outcome) => orders.filter((order) => outcomeOf(order) === outcome).slice(0, 5));
    expect(sample).toHaveLength(20);
    const retention = { retentionMs: DEFAULT_RETENTION.activityKeyMs };
    for (const order of sample) {
      const outcome = outcomeOf(order);
      // The order and its reservation, recorded again with the same payload: no conflict, nothing new.
      await recordOrder(db.pool, inputOf(order), order.workflow_id);
      const reserve = withTransaction(db.pool, (client) =>
        allocateStock(client, { idempotencyKey: keyOf(order, ActivityId.reserveStock), orderId: order.order_id, sku: order.sku, quantity: order.quantity }),
      );
      if (outcome === 'completed') await expect(reserve).resolves.toEqual({ replayed: true });
      else await expect(reserve).rejects.toBeInstanceOf(AllocationReleasedError);

      // The API's record replays the stored answer, the one orderResponseBody makes.
      const claim = await claimIdempotencyKey(
        db.pool,
        { tenantId: order.tenant_id, operation: CREATE_ORDER_OPERATION, key: order.api_key },
        { requestHash: requestHash(order.request), resourceType: 'order', proposedResourceId: 'ord_unused', leaseMs: 30_000, retentionMs: 60_000 },
      );
      const payment = outcome === 'declined' ? { status: 'declined' as const, declineCode: order.status_reason ?? '' } : { status: 'authorized' as const, paymentIntentId: order.payment_intent_id ?? '' };
      expect(claim).toEqual({ kind: 'replay', statusCode: 201, body: orderResponseBody(order.order_id, order.request, payment) });

      // The payment protocol reads each key as the transition that wrote it, and a retry of each
      // (the same request under the same key) is answered from it.
      const registered = await registerAuthorization(db.pool, {
        orderId: order.order_id,
        key: keyOf(order, ActivityId.authorizePayment),
        params: authorizationParams(order),
        ...retention,
      });
      expect(registered.keyLost).toBe(false);
      const authorization = registered.authorization;
      if (outcome === 'declined') {
        expect(authorization).toMatchObject({ stage: 'failed', failure: { failure: 'PaymentDeclined', declineCode: order.status_reason } });
        continue;
      }
      expect(authorization).toMatchObject({ stage: 'held', hold: { paymentIntentId: order.payment_intent_id, amount: order.amount_minor, currency: order.currency } });
      if (authorization.stage !== 'held') continue;
      const hold = authorization.hold;
      if (outcome === 'voided') {
        expect(await registerVoid(db.pool, keyOf(order, ActivityId.voidAuthorization), hold.paymentIntentId, retention)).toMatchObject({ stage: 'voided' });
        continue;
      }
      const capture = await registerCapture(db.pool, keyOf(order, ActivityId.capturePayment), hold, retention);
      expect(capture).toMatchObject({ stage: 'captured', capture: { paymentIntentId: hold.paymentIntentId, amountCaptured: order.amount_minor } });
      const charge = await withTransaction(db.pool, (client) =>
        postLedgerTransaction(client, {
          orderId: order.order_id,
          kind: 'charge',
          amountMinor: order.amount_minor,
          currency: order.currency,
          stripeObjectId: hold.paymentIntentId,
          idempotencyKey: keyOf(order, ActivityId.capturePayment),
        }),
      );
      expect(charge.replayed).toBe(true);
      if (outcome !== 'refunded' || capture.stage !== 'captured') continue;
      expect(await registerRefund(db.pool, keyOf(order, ActivityId.refundCapture), capture.capture, retention)).toMatchObject({
        stage: 'refunded',
        refund: { refundId: order.refund_id, amount: order.amount_minor },
      });
    }
    // Nothing above wrote a second row anywhere.
    for (const table of ['orders', 'stock_allocations', 'activity_idempotency', 'ledger_transactions', 'ledger_postings', 'api_idempotency', 'api_orders'] as const) {
      const { rows } = await db.pool.query<{ count: number }>(`select count(*)::int as count from ${table}`);
      expect({ table, count: rows[0]?.count }).toEqual({ table, count: summary.rows[table] });
    }
  });

  it('writes outbox payloads the consumers accept, and webhook events whose projections are the stored states', async () => {
    const outbox = await db.pool.query<{ payload: unknown }>('select payload from outbox');
    for (const row of outbox.rows) expect(orderEventSchema.safeParse(row.payload).success).toBe(true);
    const events = await db.pool.query<StoredEventFields & { applied: boolean; stateObjectId: string; stateStatus: string | null; stateRank: number | null }>(
      `select ${STORED_EVENT_COLUMNS}, e.applied, s.object_id as "stateObjectId", s.status as "stateStatus", s.status_rank as "stateRank"
         from stripe_webhook_events e left join stripe_object_states s on s.event_id = e.event_id`,
    );
    expect(events.rows).toHaveLength(summary.rows.stripe_webhook_events);
    for (const row of events.rows) {
      const projection = projectStoredEvent(row);
      expect({ event: row.eventId, applied: row.applied }).toEqual({ event: row.eventId, applied: projection !== null });
      if (row.stateStatus !== null) {
        expect(projection).toMatchObject({ objectId: row.stateObjectId, status: row.stateStatus, rank: row.stateRank });
      }
    }
  });

  it('reaches every table of every hot statement through an index', async () => {
    const plans = await explainHotStatements(db.pool);
    const names = plans.map((plan) => plan.name);
    for (const name of ['orders.recordOrder', 'stock.allocateStock', 'idempotency.registerKey', 'ledger.postLedgerTransaction', 'outbox.claimUnsent', 'apiIdempotency.claim: insert', 'reaper.activity_idempotency']) {
      expect(names).toContain(name);
    }
    const reads = (plan: HotStatementPlan) => plan.scans.map((scan) => scan.relation);
    expect(reads(plans.find((plan) => plan.name === 'idempotency.readKey') as HotStatementPlan)).toEqual(['activity_idempotency']);
    // The gaps this check found (an order's refunds, the webhook reaper's foreign-key check) are
    // closed by migration 012; a statement off an index is a new gap, printed with its plan.
    const gaps = plans.filter((plan) => !plan.indexOnly);
    expect(gaps.map((plan) => `${plan.name}\n${plan.plan}${plan.missingIndex ? `\nmissing: ${plan.missingIndex}` : ''}`)).toEqual([]);
    // Sequential scans pass only on tiny tables.
    const tiny = new Set(plans.flatMap((plan) => plan.scans.filter((scan) => scan.tinySeqScan).map((scan) => scan.relation)));
    for (const relation of tiny) expect(['inventory', 'api_keys', 'api_idempotency_tombstones']).toContain(relation);
  });

  it('leaves every row inside its retention horizon: the reaper finds nothing to delete', async () => {
    const report = await reapExpired(db.pool, DEFAULT_RETENTION);
    expect(report).toEqual({
      deleted: { activity_idempotency: 0, outbox: 0, stripe_object_states: 0, stripe_webhook_events: 0, processed_messages: 0 },
      expiredOpenKeys: 0,
      failures: [],
    });
    expect(await reapApiIdempotency(db.pool, { tombstoneMs: 90 * 24 * 3_600_000 })).toEqual({ compacted: 0, deleted: 0 });
  });
});

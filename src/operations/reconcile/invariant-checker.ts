// The reconciliation: checks invariants I1–I9 for every order by comparing what Stripe really
// holds and moved with the ledger, stock, orders and hold memo in PostgreSQL.
import type { Pool } from 'pg';
import type Stripe from 'stripe';
import { openHoldsOfFinishedOrders } from '../../money/payments/payment-holds.js';
import { expectedDisputeEntries, snapshotOf } from '../../money/payments/dispute-protocol.js';
import type { LedgerKind } from '../../money/ledger/ledger.js';

const DISPUTE_KINDS: ReadonlySet<LedgerKind> = new Set(['dispute_withdrawal', 'dispute_fee', 'dispute_reinstatement']);

/** One broken guarantee, by order, in words an operator can act on. */
export interface Violation {
  invariant: 'I1' | 'I2' | 'I3' | 'I4' | 'I5' | 'I6' | 'I7' | 'I8' | 'I9';
  orderId: string;
  message: string;
}

export interface OrderReconciliation {
  orderId: string;
  status: string;
  statusReason: string | null;
  /** Captured PaymentIntents. */
  charges: number;
  refunds: number;
  /** PaymentIntents cancelled without a capture: voided or lapsed holds. */
  voids: number;
}

export interface ReconciliationReport {
  checkedAt: string;
  orders: OrderReconciliation[];
  violations: Violation[];
}

interface OrderRow {
  order_id: string;
  status: string;
  status_reason: string | null;
  amount_minor: number;
  currency: string;
}

interface LedgerRow {
  order_id: string;
  kind: LedgerKind;
  amount_minor: number;
  currency: string;
  stripe_object_id: string;
  debits: number;
  credits: number;
}

interface AllocationRow {
  order_id: string;
  state: 'allocated' | 'released';
}

const TERMINAL = new Set(['completed', 'declined', 'compensated', 'needs_review']);

/** PaymentIntent statuses that still hold, or may still take, the customer's money. */
const OPEN_PAYMENT_STATUSES = new Set(['requires_capture', 'requires_action', 'processing', 'requires_confirmation']);

export interface CheckOptions {
  db: Pool;
  stripe: Stripe;
  /** Only these orders. Default: every order in the database. */
  orderIds?: string[];
}

/**
 * Checks I1–I9 for every order by reading both sides: Stripe through the SDK's list endpoints
 * (what really moved, and what is still held), and the ledger, stock, orders and hold memo through
 * SQL (what we believe). This is the daily reconciliation a payments team runs against its
 * processor. A capture is a succeeded PaymentIntent, for its `amount_received`; a hold is not
 * money, so only captures and refunds have ledger twins.
 */
export async function checkInvariants({ db, stripe, orderIds }: CheckOptions): Promise<ReconciliationReport> {
  const scope = orderIds ? new Set(orderIds) : null;
  const inScope = (orderId: string | undefined): orderId is string =>
    orderId !== undefined && (scope === null || scope.has(orderId));

  const [orders, ledger, allocations, intents, refunds, openHolds, disputes] = await Promise.all([
    db.query<OrderRow>(
      `select order_id, status, status_reason, amount_minor, currency from orders
        where $1::text[] is null or order_id = any($1)`,
      [orderIds ?? null],
    ),
    db.query<LedgerRow>(
      `select t.order_id, t.kind, t.amount_minor, t.currency, t.stripe_object_id,
              coalesce(sum(p.amount_minor) filter (where p.direction = 'debit'), 0)::bigint as debits,
              coalesce(sum(p.amount_minor) filter (where p.direction = 'credit'), 0)::bigint as credits
         from ledger_transactions t left join ledger_postings p on p.transaction_id = t.id
        where $1::text[] is null or t.order_id = any($1)
        group by t.id`,
      [orderIds ?? null],
    ),
    db.query<AllocationRow>(
      `select order_id, state from stock_allocations where $1::text[] is null or order_id = any($1)`,
      [orderIds ?? null],
    ),
    listAll((params) => stripe.paymentIntents.list(params)),
    listAll((params) => stripe.refunds.list(params)),
    openHoldsOfFinishedOrders(db, orderIds ?? null),
    listAll((params) => stripe.disputes.list(params)),
  ]);

  const violations: Violation[] = [];
  const flag = (invariant: Violation['invariant'], orderId: string, message: string) =>
    violations.push({ invariant, orderId, message });

  const intentsByOrder = groupBy(
    intents.filter((intent) => inScope(intent.metadata.order_id)),
    (intent) => intent.metadata.order_id ?? '',
  );
  const chargesByOrder = groupBy(
    intents.filter((intent) => intent.status === 'succeeded' && inScope(intent.metadata.order_id)),
    (intent) => intent.metadata.order_id ?? '',
  );
  // Refunds of captured money. Stripe may record the release of an authorization nobody captured
  // (it lapsed, or a partial capture released the rest) as a refund too; that returns no money,
  // costs no fee, and is not a refund in the sense of I2 and I3.
  const releases = new Set<Stripe.Refund.Reason>(['expired_uncaptured_charge', 'partial_capture']);
  const refundsByOrder = groupBy(
    refunds.filter(
      (refund) =>
        refund.status !== 'failed' &&
        refund.status !== 'canceled' &&
        !(refund.reason !== null && releases.has(refund.reason)) &&
        inScope(refund.metadata?.order_id ?? undefined),
    ),
    (refund) => refund.metadata?.order_id ?? '',
  );
  const ledgerByOrder = groupBy(ledger.rows, (row) => row.order_id);
  const allocationsByOrder = groupBy(allocations.rows, (row) => row.order_id);
  const stripeObjects = new Map<string, { amount: number; currency: string; kind: 'charge' | 'refund' }>();
  // What a PaymentIntent moved is what it captured: its amount_received (all of it, for an
  // automatic capture; what the saga captured, for a hold).
  for (const intent of intents) stripeObjects.set(intent.id, { amount: intent.amount_received, currency: intent.currency, kind: 'charge' });
  for (const refund of refunds) stripeObjects.set(refund.id, { amount: refund.amount, currency: refund.currency, kind: 'refund' });

  const report: OrderReconciliation[] = [];
  const knownOrders = new Set(orders.rows.map((order) => order.order_id));
  for (const orderId of new Set([...chargesByOrder.keys(), ...refundsByOrder.keys()])) {
    if (!knownOrders.has(orderId)) flag('I3', orderId, 'Stripe holds money movements for an order the database does not know');
  }

  for (const order of orders.rows) {
    const id = order.order_id;
    const charges = chargesByOrder.get(id) ?? [];
    const orderRefunds = refundsByOrder.get(id) ?? [];
    const entries = ledgerByOrder.get(id) ?? [];
    const orderAllocations = allocationsByOrder.get(id) ?? [];
    const orderIntents = intentsByOrder.get(id) ?? [];
    const voids = orderIntents.filter((intent) => intent.status === 'canceled' && intent.amount_received === 0);
    report.push({ orderId: id, status: order.status, statusReason: order.status_reason, charges: charges.length, refunds: orderRefunds.length, voids: voids.length });

    // I1: at most one capture (one successful charge).
    if (charges.length > 1) flag('I1', id, `${charges.length} captured PaymentIntents: ${charges.map((c) => c.id).join(', ')}`);

    // I2: compensated before the capture means the hold was voided and nothing refunded;
    // compensated after it, exactly one refund of what was captured; completed, no refund by the
    // saga. Refunds the merchant asked for afterwards (POST /v1/orders/:id/refunds, marked
    // merchant_refund in Stripe) are allowed on a completed order, up to what was captured.
    const charged = charges.reduce((sum, charge) => sum + charge.amount_received, 0);
    const isMerchant = (refund: Stripe.Refund) => refund.metadata?.merchant_refund === 'true';
    const sagaRefunds = orderRefunds.filter((refund) => !isMerchant(refund));
    const merchantRefunded = orderRefunds.filter(isMerchant).reduce((sum, refund) => sum + refund.amount, 0);
    const refunded = sagaRefunds.reduce((sum, refund) => sum + refund.amount, 0);
    if (order.status === 'completed' && sagaRefunds.length > 0) flag('I2', id, `completed order has ${sagaRefunds.length} refund(s) not asked for by the merchant`);
    if (merchantRefunded > 0 && (order.status !== 'completed' || merchantRefunded > charged)) {
      flag('I2', id, `${order.status} order charged ${charged} has merchant refunds totalling ${merchantRefunded}`);
    }
    if (order.status === 'compensated' && charges.length > 0 && (sagaRefunds.length !== 1 || refunded !== charged)) {
      flag('I2', id, `compensated order captured ${charged} but has ${sagaRefunds.length} refund(s) totalling ${refunded}`);
    }
    if (order.status === 'compensated' && charges.length === 0) {
      if (sagaRefunds.length > 0) flag('I2', id, `compensated before any capture, yet has ${sagaRefunds.length} refund(s)`);
      const held = orderIntents.filter((intent) => intent.status === 'requires_capture');
      if (held.length > 0) flag('I2', id, `compensated before the capture, but hold ${held.map((intent) => intent.id).join(', ')} was not voided`);
    }
    if (order.status === 'completed' && charges.length !== 1) flag('I2', id, `completed order has ${charges.length} succeeded charges`);
    if (order.status === 'declined' && (charges.length > 0 || entries.length > 0)) {
      flag('I2', id, 'declined order has a charge or ledger entries');
    }

    // I3: every Stripe movement has exactly one ledger twin, and every ledger entry has its Stripe object.
    for (const movement of [...charges.map((c) => ({ id: c.id, amount: c.amount, currency: c.currency, kind: 'charge' as const })),
      ...orderRefunds.map((r) => ({ id: r.id, amount: r.amount, currency: r.currency, kind: 'refund' as const }))]) {
      const twins = entries.filter((entry) => entry.stripe_object_id === movement.id);
      if (twins.length !== 1) flag('I3', id, `${movement.kind} ${movement.id} has ${twins.length} ledger transactions`);
      for (const twin of twins) {
        if (twin.amount_minor !== movement.amount || twin.currency !== movement.currency || twin.kind !== movement.kind) {
          flag('I3', id, `ledger ${twin.kind} for ${movement.id} is ${twin.amount_minor} ${twin.currency}, Stripe says ${movement.kind} ${movement.amount} ${movement.currency}`);
        }
      }
    }
    for (const entry of entries) {
      const object = stripeObjects.get(entry.stripe_object_id);
      // A dispute's entries are I9's: their Stripe objects are the dispute and its balance transactions.
      if (!object && !DISPUTE_KINDS.has(entry.kind)) flag('I3', id, `ledger ${entry.kind} ${entry.stripe_object_id} has no Stripe object`);
      // I4: balanced, and balanced at the transaction's amount.
      if (entry.debits !== entry.credits || entry.debits !== entry.amount_minor) {
        flag('I4', id, `ledger ${entry.kind} ${entry.stripe_object_id} does not balance: debits ${entry.debits}, credits ${entry.credits}`);
      }
    }

    // I5: a completed order holds its allocation; a compensated or declined one holds none.
    const held = orderAllocations.filter((allocation) => allocation.state === 'allocated').length;
    if (order.status === 'completed' && held !== 1) flag('I5', id, `completed order holds ${held} allocations`);
    if ((order.status === 'compensated' || order.status === 'declined') && held !== 0) {
      flag('I5', id, `${order.status} order still holds ${held} allocation(s)`);
    }

    // I6: every order ends, and needs_review says why.
    if (!TERMINAL.has(order.status)) flag('I6', id, `order is still '${order.status}'`);
    if (order.status === 'needs_review' && !order.status_reason) flag('I6', id, 'needs_review without a reason');

    // I8: no hold outlives its order: once the order is finished, each of its PaymentIntents is
    // captured (perhaps refunded) or cancelled, never still authorized or deciding.
    if (TERMINAL.has(order.status)) {
      for (const intent of orderIntents) {
        if (OPEN_PAYMENT_STATUSES.has(intent.status)) flag('I8', id, `${order.status} order's PaymentIntent ${intent.id} is still ${intent.status}`);
      }
    }
  }
  for (const hold of openHolds) {
    flag('I8', hold.orderId, `the hold memo still says ${hold.paymentIntentId} is held, though the order has finished`);
  }

  // I9: every dispute's ledger entries are exactly what its balance transactions moved (the
  // withdrawal, its fee, the reinstatement of a won one), and no dispute entry is without its dispute.
  const orderOfIntent = new Map(intents.map((intent) => [intent.id, intent.metadata.order_id]));
  const disputeEntriesSeen = new Set<LedgerRow>();
  for (const dispute of disputes) {
    const snapshot = snapshotOf(dispute);
    const orderId = orderOfIntent.get(snapshot.paymentIntentId);
    if (!inScope(orderId)) continue;
    const booked = (ledgerByOrder.get(orderId) ?? []).filter((entry) => DISPUTE_KINDS.has(entry.kind));
    for (const expected of expectedDisputeEntries(snapshot)) {
      const twins = booked.filter((entry) => entry.kind === expected.kind && entry.stripe_object_id === expected.stripeObjectId);
      for (const twin of twins) disputeEntriesSeen.add(twin);
      const [twin] = twins;
      if (twins.length !== 1 || !twin) {
        flag('I9', orderId, `dispute ${dispute.id}: ${expected.kind} ${expected.stripeObjectId} of ${expected.amount} has ${twins.length} ledger transactions`);
      } else if (twin.amount_minor !== expected.amount || twin.currency !== expected.currency) {
        flag('I9', orderId, `dispute ${dispute.id}: ledger ${expected.kind} is ${twin.amount_minor} ${twin.currency}, Stripe moved ${expected.amount} ${expected.currency}`);
      }
    }
    // The disputed amount stays withdrawn only while the dispute is open or once it is lost.
    const withdrawn = booked.filter((entry) => entry.kind === 'dispute_withdrawal').reduce((sum, entry) => sum + entry.amount_minor, 0);
    const reinstated = booked.filter((entry) => entry.kind === 'dispute_reinstatement').reduce((sum, entry) => sum + entry.amount_minor, 0);
    const held = dispute.status === 'won' || snapshot.isInquiry ? 0 : dispute.amount;
    if (withdrawn - reinstated !== held) flag('I9', orderId, `dispute ${dispute.id} is ${dispute.status}: the disputed-payments account holds ${withdrawn - reinstated}, expected ${held}`);
  }
  for (const entry of ledger.rows) {
    if (DISPUTE_KINDS.has(entry.kind) && !disputeEntriesSeen.has(entry) && inScope(entry.order_id)) {
      flag('I9', entry.order_id, `ledger ${entry.kind} ${entry.stripe_object_id} matches no balance transaction of any dispute`);
    }
  }

  // I5 across the catalogue: the check constraint makes this impossible; say so if it ever is not.
  const negative = await db.query<{ sku: string }>('select sku from inventory where available < 0');
  for (const row of negative.rows) flag('I5', '*', `stock of ${row.sku} is negative`);

  // I7: a key is never answered with another payload's effect: each ledger key carries one
  // Stripe object, and each Stripe key (run + activity) created one object.
  const keyed = groupBy(intents.filter((intent) => inScope(intent.metadata.order_id)), (intent) => `${intent.metadata.run_id ?? ''}/${intent.metadata.activity_id ?? ''}`);
  for (const [key, created] of keyed) {
    if (created.length > 1) flag('I7', created[0]?.metadata.order_id ?? '*', `key ${key} created ${created.length} PaymentIntents`);
  }

  return { checkedAt: new Date().toISOString(), orders: report, violations };
}

async function listAll<T extends { id: string }>(
  page: (params: { limit: number; starting_after?: string }) => Promise<Stripe.ApiList<T>>,
): Promise<T[]> {
  const all: T[] = [];
  let startingAfter: string | undefined;
  for (;;) {
    const result = await page({ limit: 100, ...(startingAfter && { starting_after: startingAfter }) });
    all.push(...result.data);
    const last = result.data.at(-1);
    if (!result.has_more || !last) return all;
    startingAfter = last.id;
  }
}

function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

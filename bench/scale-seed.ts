/**
 * Seeds a database with a large number of finished orders, for the bench's flat-cost-at-scale run
 * (`npm run bench -- --scale N`, issue 16): every row a finished saga, the orders API, the outbox
 * and the inbox leave behind, so the saga and the ledger can be measured against full tables.
 *
 * The rows are made with set-based SQL (`generate_series`), a batch of orders per transaction, and
 * look like the real ones: the keys are `deriveIdempotencyKey`'s `<run ID>/<activity ID>`, every
 * request hash is the SHA-256 of the canonical JSON `requestHash` makes of the same request
 * (test/bench/scale-seed.test.ts recomputes them), the ledger's transactions balance (its deferred
 * constraint trigger checks each one at the batch's commit), and each key, outbox row, webhook event
 * and API record is inside its retention horizon, as in tables the reaper keeps at steady state.
 *
 * The outcomes, by order index modulo 100 (`mix`, in percent):
 * - completed: stock reserved, the hold placed, captured (the ledger's charge), confirmed;
 * - declined: stock reserved, the card declined (no hold, nothing in the ledger), stock released;
 * - voided: the hold placed, then cancelled before its capture: voided, stock released, compensated;
 * - refunded: captured, then cancelled during the capture: refunded (the ledger's reversal), compensated.
 */
import type { Pool, QueryResult } from 'pg';
import { DEFAULT_KEY_RETENTION_MS } from '../src/activities/deps.js';
import { DEFAULT_API_IDEMPOTENCY } from '../src/api/idempotency/settings.js';
import { CREATE_ORDER_OPERATION } from '../src/api/orders/create-order.js';
import { withTransaction } from '../src/platform/db/transaction.js';
import { ActivityId } from '../src/domain/activity-ids.js';
import { FailureType } from '../src/domain/failures.js';
import { WORKFLOW_ID_PREFIX } from '../src/domain/order-input.js';
import { LedgerAccount } from '../src/money/ledger/accounts.js';
import { PaymentScope } from '../src/money/payments/payment-protocol.js';
import { RECEIPTS_SUBSCRIBER } from '../src/messaging/receipts/receipts.js';
import { EMULATED_API_VERSION } from '@order-payments/stripe-emulator';
import { STRIPE_WEBHOOK_SUBSCRIBER } from '../src/messaging/webhooks/record-stripe-event.js';

export const SEED_OUTCOMES = ['completed', 'declined', 'voided', 'refunded'] as const;
export type SeedOutcome = (typeof SEED_OUTCOMES)[number];

/** Every table the seed writes, in the order the summary lists them. */
export const SEEDED_TABLES = [
  'orders',
  'stock_allocations',
  'inventory',
  'activity_idempotency',
  'payment_holds',
  'ledger_transactions',
  'ledger_postings',
  'outbox',
  'receipts',
  'processed_messages',
  'stripe_webhook_events',
  'stripe_object_states',
  'api_keys',
  'api_idempotency',
  'api_orders',
] as const;
export type SeededTable = (typeof SEEDED_TABLES)[number];

export interface SeedOptions {
  /** Orders per transaction (one statement per table, or group of tables, per batch). Default 100,000. */
  batchSize?: number;
  /** Batches seeded at once, each on its own connection from `pool`. Default 2 (one per core here). */
  connections?: number;
  /** Names the seeded rows' IDs, so two seeds into one database do not collide. Default 'seed'. */
  label?: string;
  /** Percent of each outcome; whole numbers summing to 100. Default 90 completed, 4 declined, 3 voided, 3 refunded. */
  mix?: Record<SeedOutcome, number>;
  /** SKUs the orders spread over (`seed-sku-N`, stocked generously). Default 64. */
  skus?: number;
  /** API tenants (`seed-tenant-N`, one API key each) the orders spread over. Default 8. */
  tenants?: number;
  /**
   * The orders are spread evenly over this span, ending at `endsAt`. Default 6 days: inside every
   * retention horizon (the inbox's 7 days is the shortest), so the reaper finds nothing to delete and
   * the seeded tables are what it would leave at steady state.
   */
  spanMs?: number;
  /** When the last seeded order was created. Default: now. */
  endsAt?: Date;
  /**
   * After seeding, VACUUM (ANALYZE) the seeded tables (true, the default) or only ANALYZE them.
   * The vacuum sets the visibility map and hint bits, as autovacuum would on a live database, and
   * keeps autovacuum from starting on the new rows in the middle of the measurement that follows.
   */
  vacuum?: boolean;
  /** Called after each batch commits, with the orders committed so far. */
  onProgress?: (seeded: number, total: number) => void;
}

export interface SeedSummary {
  label: string;
  orders: number;
  outcomes: Record<SeedOutcome, number>;
  /** Rows the seed inserted, per table. */
  rows: Record<SeededTable, number>;
  batches: number;
  /** Inserting, batch by batch (wall clock). */
  insertMs: number;
  /** Time in each statement of a batch and in the commits, summed over batches (and connections). */
  stepMs: Record<string, number>;
  /** VACUUM (ANALYZE), or ANALYZE, of the seeded tables. */
  maintenanceMs: number;
  /** A CHECKPOINT after it, so the seed's dirty pages are not written during the measurement; false if not permitted. */
  checkpointed: boolean;
  elapsedMs: number;
  /** pg_database_size afterwards. */
  databaseBytes: number;
}

export const DEFAULT_SEED_MIX: Record<SeedOutcome, number> = { completed: 90, declined: 4, voided: 3, refunded: 3 };

const DAY_MS = 24 * 60 * 60 * 1000;
/** Stripe's authorization window for an online card: the hold's capture_before. */
const AUTHORIZATION_WINDOW_SECONDS = 7 * 24 * 60 * 60;
/** What a seeded SKU starts with: far more than any bench takes. */
const SEEDED_STOCK = 1_000_000_000;
/** The decline the emulator gives pm_card_chargeDeclined. */
const DECLINE = { code: 'card_declined', declineCode: 'generic_decline' } as const;
/** Why a seeded compensation ran: the customer cancelled (the saga's reason for a cancel). */
const CANCEL_REASON = 'cancelled';
/** The void's cancellation_reason for a cancel (src/activities/void-authorization.ts). */
const VOID_REASON = 'requested_by_customer';

// ---------------------------------------------------------------------------------------------
// JSON written by SQL: a shape in TypeScript, its values SQL expressions, rendered by format()

/** A value computed by SQL: a string (quoted in the JSON), or raw JSON text (a number, true, null, an object). */
class SqlValue {
  constructor(
    readonly expression: string,
    readonly raw: boolean,
  ) {}
}
/** A SQL text expression, never null, whose characters need no JSON escaping (IDs, codes). */
const str = (expression: string) => new SqlValue(expression, false);
/** A SQL number expression, never null. */
const num = (expression: string) => new SqlValue(`(${expression})::text`, true);
/** A SQL expression that is already JSON text (a boolean, a null, a nested object). */
const raw = (expression: string) => new SqlValue(expression, true);

type Shape = SqlValue | string | number | boolean | null | Shape[] | { [key: string]: Shape };

/** A SQL string literal. Used only for constants from this code. */
const lit = (value: string) => `'${value.replaceAll("'", "''")}'`;

/**
 * A SQL expression yielding the shape's JSON text: one format() call, which is about twice as fast
 * as nested jsonb_build_object for a million rows. With `sorted`, keys are in the order
 * safe-stable-stringify (src/money/idempotency/request-hash.ts) writes them, so the text is the canonical
 * JSON `requestHash` hashes.
 */
function jsonText(shape: Shape, sorted = false): string {
  const args: string[] = [];
  const literal = (value: unknown) => JSON.stringify(value).replaceAll('%', '%%');
  const render = (value: Shape): string => {
    if (value instanceof SqlValue) {
      args.push(value.expression);
      return value.raw ? '%s' : '"%s"';
    }
    if (Array.isArray(value)) return `[${value.map(render).join(',')}]`;
    if (value !== null && typeof value === 'object') {
      const keys = sorted ? Object.keys(value).sort() : Object.keys(value);
      return `{${keys.map((key) => `${literal(key)}:${render(value[key] ?? null)}`).join(',')}}`;
    }
    return literal(value);
  };
  const template = render(shape);
  return args.length === 0 ? lit(template) : `format(${lit(template)}, ${args.join(', ')})`;
}
const jsonb = (shape: Shape) => `${jsonText(shape)}::jsonb`;
/** requestHash of the request the shape describes: SHA-256 of its canonical JSON, in hex. */
const requestHashOf = (shape: Shape) => `encode(sha256(convert_to(${jsonText(shape, true)}, 'UTF8')), 'hex')`;
/** A JSON boolean from a SQL condition. */
const bool = (condition: string) => raw(`case when ${condition} then 'true' else 'false' end`);

// ---------------------------------------------------------------------------------------------
// The batch: one row per order, every ID, key and request hash computed once

const CREATE_BATCH = `
  create temp table seed_batch (
    g bigint, order_id text, run_id text, workflow_id text, outcome text, customer_id text,
    amount bigint, currency text, sku text, quantity int, payment_method text, brand text, last4 text,
    pi_id text, charge_id text, refund_id text, tenant_id text, api_key text,
    created_at timestamptz, created bigint, capture_before bigint,
    authorize_key text, reserve_key text, release_key text, capture_key text, void_key text, refund_key text,
    order_hash text, api_hash text, stock_hash text, authorize_hash text, capture_hash text, void_hash text,
    refund_hash text, ledger_charge_hash text, ledger_refund_hash text
  ) on commit drop`;

/**
 * For the seed's own transactions only: compressed full-page images in the WAL, where the server
 * allows it (a superuser setting; otherwise nothing changes). The seed's random B-tree inserts
 * write a full-page image of nearly every index page after each checkpoint; lz4 cut its WAL by a
 * fifth (7.5 to 6.0 GB for 300,000 orders).
 */
const COMPRESS_WAL = `
  do $$ begin
    perform set_config('wal_compression', 'lz4', true);
  exception when others then
    begin perform set_config('wal_compression', 'pglz', true); exception when others then null; end;
  end $$`;

/** POST /v1/orders's body (OrderRequest), as the API hashes it and stores it in api_orders. */
const ORDER_REQUEST = {
  customerId: str('o.customer_id'),
  amount: num('o.amount'),
  currency: str('o.currency'),
  paymentMethod: str('o.payment_method'),
  sku: str('o.sku'),
  quantity: num('o.quantity'),
};
/** The PaymentIntent metadata every saga call sets (here, the authorization's). */
const INTENT_METADATA = {
  order_id: str('o.order_id'),
  customer_id: str('o.customer_id'),
  workflow_id: str('o.workflow_id'),
  run_id: str('o.run_id'),
  activity_id: ActivityId.authorizePayment,
};
/** The authorization's Stripe parameters (src/activities/authorization.ts, authorizationParams). */
const AUTHORIZATION_PARAMS = {
  amount: num('o.amount'),
  currency: str('o.currency'),
  payment_method: str('o.payment_method'),
  confirm: true,
  capture_method: 'manual',
  automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
  expand: ['latest_charge'],
  description: str(`'Order ' || o.order_id`),
  metadata: INTENT_METADATA,
};
const ledgerEntry = (kind: 'charge' | 'refund', objectId: string) => ({
  orderId: str('o.order_id'),
  kind,
  amountMinor: num('o.amount'),
  currency: str('o.currency'),
  stripeObjectId: str(objectId),
});
const keyOf = (activityId: string) => `o.run_id || '/' || ${lit(activityId)}`;

/**
 * $1, $2: the batch's first and last+1 order index; $3: the label; $4: when order 0 was created;
 * $5: milliseconds between orders; $6, $7, $8: where the completed, declined and voided shares end
 * (of 100); $9: SKUs; $10: tenants. IDs are hex digests of (label, index): unique, stable, and as
 * scattered over the primary keys' B-trees as the random IDs the API and Stripe hand out.
 */
const FILL_BATCH = `
  insert into seed_batch
  select g, o.order_id, o.run_id, o.workflow_id, o.outcome, o.customer_id, o.amount, o.currency, o.sku, o.quantity,
         o.payment_method, o.brand, o.last4, o.pi_id, o.charge_id, o.refund_id, o.tenant_id, o.api_key,
         o.created_at, o.created, o.created + ${AUTHORIZATION_WINDOW_SECONDS},
         ${keyOf(ActivityId.authorizePayment)}, ${keyOf(ActivityId.reserveStock)}, ${keyOf(ActivityId.releaseStock)},
         ${keyOf(ActivityId.capturePayment)}, ${keyOf(ActivityId.voidAuthorization)}, ${keyOf(ActivityId.refundCapture)},
         ${requestHashOf({ orderId: str('o.order_id'), tenantId: str('o.tenant_id'), ...ORDER_REQUEST })},
         ${requestHashOf(ORDER_REQUEST)},
         ${requestHashOf({ orderId: str('o.order_id'), sku: str('o.sku'), quantity: num('o.quantity') })},
         ${requestHashOf(AUTHORIZATION_PARAMS)},
         ${requestHashOf({ paymentIntentId: str('o.pi_id'), amountToCapture: num('o.amount') })},
         ${requestHashOf({ paymentIntentId: str('o.pi_id') })},
         ${requestHashOf({ payment_intent: str('o.pi_id'), amount: num('o.amount') })},
         ${requestHashOf(ledgerEntry('charge', 'o.pi_id'))},
         ${requestHashOf(ledgerEntry('refund', 'o.refund_id'))}
    from generate_series($1::bigint, $2::bigint - 1) as g
   cross join lateral (
     select 'ord_' || substr(md5($3::text || ':order:' || g), 1, 24) as order_id,
            md5($3::text || ':run:' || g)::uuid::text as run_id,
            'pi_' || substr(md5($3::text || ':pi:' || g), 1, 24) as pi_id,
            'ch_' || substr(md5($3::text || ':ch:' || g), 1, 24) as charge_id,
            're_' || substr(md5($3::text || ':re:' || g), 1, 24) as refund_id,
            md5($3::text || ':idempotency-key:' || g)::uuid::text as api_key,
            $4::timestamptz + g * ($5::double precision * interval '1 millisecond') as created_at,
            case when g % 100 < $6::int then 'completed' when g % 100 < $7::int then 'declined'
                 when g % 100 < $8::int then 'voided' else 'refunded' end as outcome
   ) i
   cross join lateral (
     select i.order_id, i.run_id, ${lit(WORKFLOW_ID_PREFIX)} || i.order_id as workflow_id, i.outcome,
            'cust-' || (g * 7 % 100000) as customer_id,
            (500 + g * 7919 % 50000)::bigint as amount,
            case when g % 7 = 3 then 'eur' else 'usd' end as currency,
            'seed-sku-' || (g % $9::int) as sku,
            (1 + g % 3)::int as quantity,
            case when i.outcome = 'declined' then 'pm_card_chargeDeclined' when g % 2 = 0 then 'pm_card_visa' else 'pm_card_mastercard' end as payment_method,
            case when i.outcome <> 'declined' and g % 2 = 1 then 'mastercard' else 'visa' end as brand,
            case when i.outcome = 'declined' then '0002' when g % 2 = 0 then '4242' else '4444' end as last4,
            i.pi_id, i.charge_id, i.refund_id,
            'seed-tenant-' || (g % $10::int) as tenant_id, i.api_key,
            i.created_at, extract(epoch from i.created_at)::bigint as created
   ) o`;

// ---------------------------------------------------------------------------------------------
// One statement per table (or per group of tables written together), each over the whole batch

/** Each order as the saga left it: completed, declined, or compensated with its reason. */
const INSERT_ORDERS = `
  insert into orders (order_id, tenant_id, customer_id, amount_minor, currency, sku, quantity, request_hash, status, status_reason,
                      charge_key, payment_intent_id, refund_id, workflow_id, created_at, updated_at)
  select order_id, tenant_id, customer_id, amount, currency, sku, quantity, order_hash,
         case outcome when 'completed' then 'completed' when 'declined' then 'declined' else 'compensated' end,
         case outcome when 'completed' then null when 'declined' then ${lit(DECLINE.declineCode)} else ${lit(CANCEL_REASON)} end,
         authorize_key,
         case when outcome <> 'declined' then pi_id end,
         case when outcome = 'refunded' then refund_id end,
         workflow_id, created_at, created_at + interval '1200 milliseconds'
    from seed_batch`;

/** The reservation: kept by a completed order, released (once, by release-stock) otherwise. */
const INSERT_ALLOCATIONS = `
  insert into stock_allocations (idempotency_key, order_id, tenant_id, sku, quantity, request_hash, state, release_key, created_at, released_at)
  select reserve_key, order_id, tenant_id, sku, quantity, stock_hash,
         case when outcome = 'completed' then 'allocated' else 'released' end,
         case when outcome <> 'completed' then release_key end,
         created_at + interval '20 milliseconds',
         case when outcome <> 'completed' then created_at + interval '1100 milliseconds' end
    from seed_batch`;

/** The results the payment protocol's transitions store (src/money/payments/payment-protocol.ts). */
const HOLD_RESULT = { paymentIntentId: str('o.pi_id'), amount: num('o.amount'), currency: str('o.currency'), status: 'requires_capture', captureBefore: num('o.capture_before') };
const DECLINE_RESULT = { failure: FailureType.PaymentDeclined, code: DECLINE.code, declineCode: DECLINE.declineCode, paymentIntentId: str('o.pi_id') };
const CAPTURE_RESULT = { paymentIntentId: str('o.pi_id'), amountCaptured: num('o.amount'), currency: str('o.currency'), status: 'succeeded' };
const VOID_RESULT = { paymentIntentId: str('o.pi_id'), status: 'canceled', cancellationReason: VOID_REASON, expired: false };
const REFUND_RESULT = { refundId: str('o.refund_id'), paymentIntentId: str('o.pi_id'), amount: num('o.amount'), currency: str('o.currency') };

/** The payment keys, each with the result its transition stored. $1: the key retention in milliseconds, from registration. */
const INSERT_KEYS = `
  insert into activity_idempotency (scope, idempotency_key, request_hash, state, result, attempts, created_at, updated_at, expires_at)
  select k.scope, k.key, k.hash, k.state, k.result, 1, k.at, k.at + interval '150 milliseconds',
         k.at + $1::double precision * interval '1 millisecond'
    from seed_batch o
   cross join lateral (values
     (${lit(PaymentScope.authorize)}, o.authorize_key, o.authorize_hash,
      case when o.outcome = 'declined' then 'failed' else 'completed' end,
      case when o.outcome = 'declined' then ${jsonb(DECLINE_RESULT)} else ${jsonb(HOLD_RESULT)} end,
      o.created_at + interval '40 milliseconds'),
     (${lit(PaymentScope.capture)}, case when o.outcome in ('completed', 'refunded') then o.capture_key end, o.capture_hash, 'completed',
      ${jsonb(CAPTURE_RESULT)}, o.created_at + interval '400 milliseconds'),
     (${lit(PaymentScope.void)}, case when o.outcome = 'voided' then o.void_key end, o.void_hash, 'completed',
      ${jsonb(VOID_RESULT)}, o.created_at + interval '700 milliseconds'),
     (${lit(PaymentScope.refund)}, case when o.outcome = 'refunded' then o.refund_key end, o.refund_hash, 'completed',
      ${jsonb(REFUND_RESULT)}, o.created_at + interval '800 milliseconds')
   ) as k(scope, key, hash, state, result, at)
   where k.key is not null`;

/** The hold memo: captured, or voided; a declined card never held anything. */
const INSERT_HOLDS = `
  insert into payment_holds (order_id, payment_intent_id, amount_authorized, currency, capture_before, state, amount_captured, created_at, updated_at)
  select order_id, pi_id, amount, currency, to_timestamp(capture_before),
         case when outcome = 'voided' then 'voided' else 'captured' end,
         case when outcome = 'voided' then null else amount end,
         created_at + interval '200 milliseconds',
         created_at + interval '700 milliseconds'
    from seed_batch where outcome <> 'declined'`;

/**
 * The ledger, as postLedgerTransaction writes it: the charge at the capture (under the capture's
 * key), the reversal at the refund (under the refund's key), each with its two postings. The balance
 * trigger checks every transaction at the batch's commit.
 */
const INSERT_LEDGER = `
  with txn as (
    insert into ledger_transactions (order_id, kind, amount_minor, currency, stripe_object_id, idempotency_key, request_hash, created_at)
    select order_id, kind, amount, currency, object_id, key, hash, at from (
      select order_id, 'charge' as kind, amount, currency, pi_id as object_id, capture_key as key, ledger_charge_hash as hash,
             created_at + interval '450 milliseconds' as at
        from seed_batch where outcome in ('completed', 'refunded')
      union all
      select order_id, 'refund', amount, currency, refund_id, refund_key, ledger_refund_hash, created_at + interval '850 milliseconds'
        from seed_batch where outcome = 'refunded'
    ) entries order by at
    returning id, kind, amount_minor
  ), posted as (
    insert into ledger_postings (transaction_id, account, direction, amount_minor)
    select txn.id, p.account, p.direction, txn.amount_minor
      from txn cross join lateral (values
        (case when txn.kind = 'charge' then ${lit(LedgerAccount.StripeBalance)} else ${lit(LedgerAccount.CustomerPayments)} end, 'debit'),
        (case when txn.kind = 'charge' then ${lit(LedgerAccount.CustomerPayments)} else ${lit(LedgerAccount.StripeBalance)} end, 'credit')
      ) as p(account, direction)
    returning 1
  )
  select (select count(*) from txn)::int as transactions, (select count(*) from posted)::int as postings`;

/**
 * The outbox rows (sent), with the payload insertOrderEvent builds (the order row as the writing
 * transaction saw it), and what the receipts consumer made of each: its receipt and its inbox row.
 */
const INSERT_OUTBOX = `
  with events as (
    select o.order_id, o.currency, e.*
      from seed_batch o cross join lateral (values
        (case when o.outcome in ('completed', 'refunded') then 'order.paid' end, 'paid', o.amount, o.pi_id, null::text, null::text,
         o.created_at + interval '450 milliseconds'),
        (case when o.outcome = 'refunded' then 'order.refunded' end, 'compensating', o.amount, o.pi_id, o.refund_id, ${lit(CANCEL_REASON)},
         o.created_at + interval '850 milliseconds'),
        (case when o.outcome <> 'completed' then 'order.failed' end,
         case when o.outcome = 'declined' then 'declined' else 'compensated' end,
         o.amount, o.pi_id, case when o.outcome = 'refunded' then o.refund_id end,
         case when o.outcome = 'declined' then ${lit(DECLINE.declineCode)} else ${lit(CANCEL_REASON)} end,
         o.created_at + interval '1200 milliseconds')
      ) as e(event_type, status, amount, pi_id, refund_id, reason, at)
     where e.event_type is not null
  ), ob as (
    insert into outbox (event_type, order_id, payload, created_at, sent_at, attempts)
    select event_type, order_id,
           ${jsonb({
             event_type: str('event_type'),
             order_id: str('order_id'),
             status: str('status'),
             amount_minor: num('amount'),
             currency: str('currency'),
             payment_intent_id: str('pi_id'),
             refund_id: raw(`coalesce('"' || refund_id || '"', 'null')`),
             reason: raw(`coalesce('"' || reason || '"', 'null')`),
             // As jsonb_build_object writes a timestamptz (in the session's time zone).
             occurred_at: str(`to_json(at) #>> '{}'`),
           })},
           at, at + interval '60 milliseconds', 1
      from events order by at
    returning id, event_type, order_id, payload, sent_at
  ), rc as (
    insert into receipts (message_id, order_id, event_type, amount_minor, currency, stripe_object_id, order_status, reason, occurred_at, created_at)
    select id::text, order_id, event_type, (payload->>'amount_minor')::bigint, payload->>'currency',
           case when event_type = 'order.refunded' then payload->>'refund_id' else payload->>'payment_intent_id' end,
           payload->>'status', payload->>'reason', (payload->>'occurred_at')::timestamptz, sent_at + interval '30 milliseconds'
      from ob
    returning 1
  ), inbox as (
    insert into processed_messages (subscriber_id, message_id, processed_at)
    select ${lit(RECEIPTS_SUBSCRIBER)}, id::text, sent_at + interval '30 milliseconds' from ob
    returning 1
  )
  select (select count(*) from ob)::int as outbox, (select count(*) from rc)::int as receipts, (select count(*) from inbox)::int as inbox`;

/**
 * The webhook events Stripe (the emulator) sends for each outcome, in order, and what each leaves in
 * `stripe_object_states` (recordStripeEvent): a state only moves forward, so an object's row is the
 * one its last applied event wrote. charge.* events other than charge.refunded project no state and
 * are recorded unapplied.
 */
export interface EventSpec {
  outcome: SeedOutcome;
  seq: number;
  type: string;
  subject: 'payment_intent' | 'charge' | 'refund';
  /** The subject's status in the event's snapshot. */
  status: string;
  applied: boolean;
  /** The call whose request raised it: its key is the event's request.idempotency_key. */
  key: 'authorize' | 'capture' | 'void' | 'refund';
  /** The state row this event leaves (it is the object's last applied event), if any. */
  state: { objectType: 'payment_intent' | 'refund'; status: string; rank: number } | null;
}

const holdEvents = (outcome: SeedOutcome): EventSpec[] => [
  { outcome, seq: 1, type: 'payment_intent.created', subject: 'payment_intent', status: 'requires_confirmation', applied: true, key: 'authorize', state: null },
  { outcome, seq: 2, type: 'charge.succeeded', subject: 'charge', status: 'succeeded', applied: false, key: 'authorize', state: null },
  { outcome, seq: 3, type: 'payment_intent.amount_capturable_updated', subject: 'payment_intent', status: 'requires_capture', applied: true, key: 'authorize', state: null },
];
const captureEvents = (outcome: SeedOutcome, last: boolean): EventSpec[] => [
  { outcome, seq: 4, type: 'charge.captured', subject: 'charge', status: 'succeeded', applied: false, key: 'capture', state: null },
  {
    outcome,
    seq: 5,
    type: 'payment_intent.succeeded',
    subject: 'payment_intent',
    status: 'succeeded',
    applied: true,
    key: 'capture',
    state: last ? { objectType: 'payment_intent', status: 'succeeded', rank: 3 } : null,
  },
];
export const EVENT_SPECS: readonly EventSpec[] = [
  ...holdEvents('completed'),
  ...captureEvents('completed', true),
  ...holdEvents('refunded'),
  ...captureEvents('refunded', false),
  { outcome: 'refunded', seq: 6, type: 'refund.created', subject: 'refund', status: 'succeeded', applied: true, key: 'refund', state: { objectType: 'refund', status: 'succeeded', rank: 2 } },
  { outcome: 'refunded', seq: 7, type: 'charge.refunded', subject: 'charge', status: 'succeeded', applied: true, key: 'refund', state: { objectType: 'payment_intent', status: 'refunded', rank: 5 } },
  ...holdEvents('voided'),
  { outcome: 'voided', seq: 8, type: 'payment_intent.canceled', subject: 'payment_intent', status: 'canceled', applied: true, key: 'void', state: { objectType: 'payment_intent', status: 'canceled', rank: 3 } },
  { outcome: 'declined', seq: 1, type: 'payment_intent.created', subject: 'payment_intent', status: 'requires_confirmation', applied: true, key: 'authorize', state: null },
  { outcome: 'declined', seq: 9, type: 'charge.failed', subject: 'charge', status: 'failed', applied: false, key: 'authorize', state: null },
  {
    outcome: 'declined',
    seq: 10,
    type: 'payment_intent.payment_failed',
    subject: 'payment_intent',
    status: 'requires_payment_method',
    applied: true,
    key: 'authorize',
    state: { objectType: 'payment_intent', status: 'payment_failed', rank: 2 },
  },
];

/** The event's object, a snapshot of the PaymentIntent, Charge or Refund (s: the spec, o: the order). */
const EVENT_SUBJECT = `case s.subject
  when 'payment_intent' then ${jsonText({
    id: str('o.pi_id'),
    object: 'payment_intent',
    amount: num('o.amount'),
    amount_capturable: num(`case when s.status = 'requires_capture' then o.amount else 0 end`),
    amount_received: num(`case when s.status = 'succeeded' then o.amount else 0 end`),
    cancellation_reason: raw(`case when s.status = 'canceled' then ${lit(JSON.stringify(VOID_REASON))} else 'null' end`),
    capture_method: 'manual',
    created: num('o.created'),
    currency: str('o.currency'),
    customer: null,
    description: str(`'Order ' || o.order_id`),
    last_payment_error: raw(
      `case when s.status = 'requires_payment_method' then ${lit(JSON.stringify({ type: 'card_error', code: DECLINE.code, decline_code: DECLINE.declineCode, message: 'Your card was declined.' }))} else 'null' end`,
    ),
    latest_charge: str('o.charge_id'),
    livemode: false,
    metadata: INTENT_METADATA,
    payment_method: str('o.payment_method'),
    payment_method_types: ['card'],
    status: str('s.status'),
  })}
  when 'charge' then ${jsonText({
    id: str('o.charge_id'),
    object: 'charge',
    amount: num('o.amount'),
    amount_captured: num(`case when s.type in ('charge.captured', 'charge.refunded') then o.amount else 0 end`),
    amount_refunded: num(`case when s.type = 'charge.refunded' then o.amount else 0 end`),
    captured: bool(`s.type in ('charge.captured', 'charge.refunded')`),
    created: num('o.created'),
    currency: str('o.currency'),
    livemode: false,
    metadata: INTENT_METADATA,
    paid: bool(`s.status = 'succeeded'`),
    payment_intent: str('o.pi_id'),
    payment_method: str('o.payment_method'),
    payment_method_details: { type: 'card', card: { brand: str('o.brand'), last4: str('o.last4'), capture_before: num('o.capture_before') } },
    refunded: bool(`s.type = 'charge.refunded'`),
    status: str('s.status'),
  })}
  else ${jsonText({
    id: str('o.refund_id'),
    object: 'refund',
    amount: num('o.amount'),
    charge: str('o.charge_id'),
    created: num('o.created + 1'),
    currency: str('o.currency'),
    metadata: { order_id: str('o.order_id'), workflow_id: str('o.workflow_id'), run_id: str('o.run_id'), activity_id: ActivityId.refundCapture },
    payment_intent: str('o.pi_id'),
    reason: VOID_REASON,
    status: str('s.status'),
  })}
  end`;

/**
 * Stripe's webhooks as recordStripeEvent leaves them: the fields it keeps of the event (built here as
 * Stripe's Event with a snapshot of its object, then read as storedEventFields reads it), its inbox
 * row, and each object's latest state. $1: the event specs (jsonb).
 */
const INSERT_WEBHOOKS = `
  with ev as (
    select e.event_id, s.type, s.applied, s.state, o.order_id, o.pi_id, o.refund_id, e.created,
           case s.subject when 'payment_intent' then o.pi_id when 'charge' then o.charge_id else o.refund_id end as object_id,
           o.created_at + s.seq * interval '100 milliseconds' + interval '30 milliseconds' as received_at,
           ${jsonb({
             id: str('e.event_id'),
             object: 'event',
             api_version: EMULATED_API_VERSION,
             created: num('e.created'),
             data: { object: raw(EVENT_SUBJECT) },
             livemode: false,
             pending_webhooks: 1,
             request: {
               id: str(`'req_' || substr(e.event_id, 5, 14)`),
               idempotency_key: str(`case s.key when 'authorize' then o.authorize_key when 'capture' then o.capture_key when 'void' then o.void_key else o.refund_key end`),
             },
             type: str('s.type'),
           })} as payload
      from seed_batch o
      join jsonb_to_recordset($1::jsonb)
           as s(outcome text, seq int, type text, subject text, status text, applied boolean, key text, state jsonb)
        on s.outcome = o.outcome
     cross join lateral (select 'evt_' || substr(md5(o.order_id || ':evt:' || s.seq), 1, 24) as event_id, o.created + s.seq / 4 as created) e
  ), recorded as (
    insert into stripe_webhook_events (event_id, event_type, object_id, payment_intent_id, order_id, event_created,
                                       received_at, applied, handed_off_at,
                                       object_type, object_status, amount, amount_refunded, refunded, currency)
    select event_id, type, object_id, pi_id, order_id, created, received_at, applied,
           case when applied then received_at + interval '5 milliseconds' end,
           payload #>> '{data,object,object}', payload #>> '{data,object,status}',
           (payload #>> '{data,object,amount}')::bigint, (payload #>> '{data,object,amount_refunded}')::bigint,
           (payload #>> '{data,object,refunded}')::boolean, payload #>> '{data,object,currency}'
      from ev
    returning 1
  ), inbox as (
    insert into processed_messages (subscriber_id, message_id, processed_at)
    select ${lit(STRIPE_WEBHOOK_SUBSCRIBER)}, event_id, received_at from ev
    returning 1
  ), states as (
    insert into stripe_object_states (object_id, object_type, payment_intent_id, order_id, status, status_rank, amount_refunded,
                                      event_id, event_created, updated_at)
    select case when state->>'objectType' = 'refund' then refund_id else pi_id end, state->>'objectType', pi_id, order_id,
           state->>'status', (state->>'rank')::int,
           case when state->>'status' = 'refunded' then (payload->'data'->'object'->>'amount_refunded')::bigint end,
           event_id, created, received_at
      from ev where state is not null
    returning 1
  )
  select (select count(*) from recorded)::int as events, (select count(*) from inbox)::int as inbox, (select count(*) from states)::int as states`;

/** The answer POST /v1/orders stored (orderResponseBody in src/api/orders/create-order.ts). */
const RESPONSE_FIELDS = {
  id: str('o.order_id'),
  object: 'order',
  amount: num('o.amount'),
  currency: str('o.currency'),
  customerId: str('o.customer_id'),
  paymentMethod: str('o.payment_method'),
  sku: str('o.sku'),
  quantity: num('o.quantity'),
  workflowId: str('o.workflow_id'),
};

/**
 * What POST /v1/orders left for each order: the completed idempotency record with its stored 201
 * response, and the tenant's ownership row. $1: the record retention in milliseconds.
 */
const INSERT_API = `
  with record as (
    insert into api_idempotency (tenant_id, operation, idempotency_key, request_hash, state, status_code, response_body,
                                 resource_type, resource_id, created_at, expires_at, locked_until)
    select tenant_id, ${lit(CREATE_ORDER_OPERATION)}, api_key, api_hash, 'completed', 201,
           case when outcome = 'declined'
                then ${jsonb({ ...RESPONSE_FIELDS, status: 'declined', declineCode: DECLINE.declineCode })}
                else ${jsonb({ ...RESPONSE_FIELDS, status: 'authorized', paymentIntentId: str('o.pi_id') })} end,
           'order', order_id, created_at - interval '30 milliseconds',
           created_at - interval '30 milliseconds' + $1::double precision * interval '1 millisecond', null
      from seed_batch o
    returning 1
  ), owned as (
    insert into api_orders (order_id, tenant_id, request, created_at)
    select order_id, tenant_id, ${jsonb(ORDER_REQUEST)}, created_at - interval '30 milliseconds'
      from seed_batch o
    returning 1
  )
  select (select count(*) from record)::int as records, (select count(*) from owned)::int as owned`;

/** The seeded SKUs, stocked far beyond what any run takes for every seeded tenant, and one API key per tenant. */
const INSERT_CATALOGUE = `
  with stock as (
    insert into inventory (tenant_id, sku, available)
    select 'seed-tenant-' || t, 'seed-sku-' || n, $2 from generate_series(0, $1::int - 1) n, generate_series(0, $3::int - 1) t
    on conflict (tenant_id, sku) do nothing
    returning 1
  ), keys as (
    insert into api_keys (key_hash, tenant_id, key_prefix)
    select encode(sha256(convert_to($4::text || ':api-key:' || n, 'UTF8')), 'hex'), 'seed-tenant-' || n,
           'opk_' || substr(md5($4::text || ':api-key:' || n), 1, 6)
      from generate_series(0, $3::int - 1) n
    on conflict do nothing
    returning 1
  )
  select (select count(*) from stock)::int as stock, (select count(*) from keys)::int as keys`;

/** One statement of a batch: its parameters, and the rows it inserted per table. */
interface SeedStep {
  name: string;
  sql: string;
  params: (from: number, to: number) => unknown[];
  tally: (result: QueryResult) => Partial<Record<SeededTable, number>>;
}

const column = (result: QueryResult, name: string): number => Number((result.rows[0] as Record<string, unknown> | undefined)?.[name] ?? 0);
const inserted = (result: QueryResult): number => result.rowCount ?? 0;

/** How many of the orders 0..count-1 have each outcome (by index modulo 100). */
export function outcomeCounts(count: number, mix: Record<SeedOutcome, number> = DEFAULT_SEED_MIX): Record<SeedOutcome, number> {
  const counts: Record<SeedOutcome, number> = { completed: 0, declined: 0, voided: 0, refunded: 0 };
  for (let residue = 0; residue < 100 && residue < count; residue++) {
    counts[outcomeOf(residue, mix)] += Math.floor((count - 1 - residue) / 100) + 1;
  }
  return counts;
}

function outcomeOf(residue: number, mix: Record<SeedOutcome, number>): SeedOutcome {
  if (residue < mix.completed) return 'completed';
  if (residue < mix.completed + mix.declined) return 'declined';
  if (residue < mix.completed + mix.declined + mix.voided) return 'voided';
  return 'refunded';
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new Error(`scale seed: ${name} must be a positive whole number, not ${value}`);
  return value;
}

/**
 * Seeds `count` finished orders, with everything their sagas, the API, the outbox and the inbox
 * left, into the migrated database behind `pool`, then vacuums and analyzes the tables. Each batch
 * commits on its own; a failure stops the seed (batches already committed stay). Orders already
 * seeded under the same label fail on the orders' primary key: seed a fresh database, or another label.
 */
export async function seedFinishedOrders(pool: Pool, count: number, options: SeedOptions = {}): Promise<SeedSummary> {
  const started = performance.now();
  const label = options.label ?? 'seed';
  const mix = options.mix ?? DEFAULT_SEED_MIX;
  positiveInteger('the order count', count);
  const batchSize = positiveInteger('the batch size', options.batchSize ?? 100_000);
  const connections = positiveInteger('connections', options.connections ?? 2);
  const skus = positiveInteger('skus', options.skus ?? 64);
  const tenants = positiveInteger('tenants', options.tenants ?? 8);
  const spanMs = options.spanMs ?? 6 * DAY_MS;
  const shares = SEED_OUTCOMES.map((outcome) => mix[outcome]);
  if (shares.some((share) => !Number.isInteger(share) || share < 0) || shares.reduce((a, b) => a + b, 0) !== 100) {
    throw new Error(`scale seed: the mix must be whole percentages summing to 100, not ${JSON.stringify(mix)}`);
  }
  if (!/^[a-z0-9-]{1,20}$/.test(label)) throw new Error(`scale seed: the label must be 1-20 lower-case letters, digits or '-', not '${label}'`);
  const start = new Date((options.endsAt ?? new Date()).getTime() - spanMs);
  const specs = JSON.stringify(EVENT_SPECS);

  const steps: SeedStep[] = [
    {
      name: 'batch',
      sql: FILL_BATCH,
      params: (from, to) => [from, to, label, start.toISOString(), spanMs / count, mix.completed, mix.completed + mix.declined, 100 - mix.refunded, skus, tenants],
      tally: () => ({}),
    },
    { name: 'orders', sql: INSERT_ORDERS, params: () => [], tally: (r) => ({ orders: inserted(r) }) },
    { name: 'stock_allocations', sql: INSERT_ALLOCATIONS, params: () => [], tally: (r) => ({ stock_allocations: inserted(r) }) },
    { name: 'activity_idempotency', sql: INSERT_KEYS, params: () => [DEFAULT_KEY_RETENTION_MS], tally: (r) => ({ activity_idempotency: inserted(r) }) },
    { name: 'payment_holds', sql: INSERT_HOLDS, params: () => [], tally: (r) => ({ payment_holds: inserted(r) }) },
    {
      name: 'ledger',
      sql: INSERT_LEDGER,
      params: () => [],
      tally: (r) => ({ ledger_transactions: column(r, 'transactions'), ledger_postings: column(r, 'postings') }),
    },
    {
      name: 'outbox',
      sql: INSERT_OUTBOX,
      params: () => [],
      tally: (r) => ({ outbox: column(r, 'outbox'), receipts: column(r, 'receipts'), processed_messages: column(r, 'inbox') }),
    },
    {
      name: 'webhooks',
      sql: INSERT_WEBHOOKS,
      params: () => [specs],
      tally: (r) => ({ stripe_webhook_events: column(r, 'events'), processed_messages: column(r, 'inbox'), stripe_object_states: column(r, 'states') }),
    },
    {
      name: 'api',
      sql: INSERT_API,
      params: () => [DEFAULT_API_IDEMPOTENCY.retentionMs],
      tally: (r) => ({ api_idempotency: column(r, 'records'), api_orders: column(r, 'owned') }),
    },
  ];

  const rows = Object.fromEntries(SEEDED_TABLES.map((table) => [table, 0])) as Record<SeededTable, number>;
  const stepMs: Record<string, number> = Object.fromEntries([...steps.map((step): [string, number] => [step.name, 0]), ['commit', 0]]);
  const add = (tallies: Partial<Record<SeededTable, number>>) => {
    for (const [table, added] of Object.entries(tallies) as [SeededTable, number][]) rows[table] += added;
  };
  const time = (name: string, since: number) => {
    stepMs[name] = (stepMs[name] ?? 0) + performance.now() - since;
  };

  const catalogue = await pool.query(INSERT_CATALOGUE, [skus, SEEDED_STOCK, tenants, label]);
  add({ inventory: column(catalogue, 'stock'), api_keys: column(catalogue, 'keys') });

  const seedBatch = async (from: number, to: number) => {
    let committing = 0;
    await withTransaction(pool, async (client) => {
      await client.query(COMPRESS_WAL);
      await client.query(CREATE_BATCH);
      for (const step of steps) {
        const t0 = performance.now();
        const result = await client.query(step.sql, step.params(from, to));
        time(step.name, t0);
        add(step.tally(result));
      }
      committing = performance.now();
    });
    // The commit runs the ledger's deferred balance check over every transaction of the batch.
    time('commit', committing);
  };

  let next = 0;
  let seeded = 0;
  let batches = 0;
  let failed = false;
  const worker = async () => {
    while (next < count && !failed) {
      const from = next;
      const to = Math.min(count, from + batchSize);
      next = to;
      try {
        await seedBatch(from, to);
      } catch (error) {
        failed = true;
        throw error;
      }
      seeded += to - from;
      batches += 1;
      options.onProgress?.(seeded, count);
    }
  };
  const outcomes = await Promise.allSettled(Array.from({ length: Math.min(connections, Math.ceil(count / batchSize)) }, worker));
  const failure = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failure) throw failure.reason;
  const insertedAt = performance.now();

  const tables = SEEDED_TABLES.join(', ');
  await pool.query(options.vacuum === false ? `analyze ${tables}` : `vacuum (analyze) ${tables}`);
  const maintainedAt = performance.now();
  const checkpointed = await pool.query('checkpoint').then(
    () => true,
    () => false,
  );
  // A bigint: a number where src/platform/db/pool.ts set the parser, else a string.
  const size = await pool.query<{ bytes: number | string }>('select pg_database_size(current_database())::bigint as bytes');

  return {
    label,
    orders: count,
    outcomes: outcomeCounts(count, mix),
    rows,
    batches,
    insertMs: Math.round(insertedAt - started),
    stepMs: Object.fromEntries(Object.entries(stepMs).map(([name, ms]) => [name, Math.round(ms)])),
    maintenanceMs: Math.round(maintainedAt - insertedAt),
    checkpointed,
    elapsedMs: Math.round(performance.now() - started),
    databaseBytes: Number(size.rows[0]?.bytes ?? 0),
  };
}

// The ledger micro-benchmark: the per-operation cost of an idempotent ledger posting, its replay,
// and a plain insert without idempotency, in alternating rounds.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { createPool } from '../src/platform/db/pool.js';
import { withTransaction } from '../src/platform/db/transaction.js';
import { LedgerAccount } from '../src/money/ledger/accounts.js';
import { postLedgerTransaction, type LedgerEntry } from '../src/money/ledger/ledger.js';
import { percentile } from './closed-loop.js';
import { countQueries } from './query-counter.js';

/**
 * The reference for "plain": the same ledger tables, constraints and balance triggers, minus the
 * idempotency key, its unique index and the request hash. The triggers are the ledger's own
 * functions; they find these tables through the search path.
 */
const PLAIN_LEDGER_SQL = `
  drop schema if exists bench_plain cascade;
  create schema bench_plain;
  create table bench_plain.ledger_transactions (
    id               bigint generated always as identity primary key,
    order_id         text not null references public.orders (order_id),
    kind             text not null check (kind in ('charge', 'refund')),
    amount_minor     bigint not null check (amount_minor > 0),
    currency         text not null check (currency ~ '^[a-z]{3}$'),
    stripe_object_id text not null unique,
    created_at       timestamptz not null default now()
  );
  create unique index on bench_plain.ledger_transactions (order_id) where kind = 'charge';
  create table bench_plain.ledger_postings (
    transaction_id bigint not null references bench_plain.ledger_transactions (id),
    account        text not null,
    direction      text not null check (direction in ('debit', 'credit')),
    amount_minor   bigint not null check (amount_minor > 0),
    primary key (transaction_id, account, direction)
  );
  create constraint trigger ledger_transactions_balanced after insert on bench_plain.ledger_transactions
    deferrable initially deferred for each row execute function public.ledger_check_balance();
  create constraint trigger ledger_postings_balanced after insert on bench_plain.ledger_postings
    deferrable initially deferred for each row execute function public.ledger_check_balance();
`;

export interface OperationCost {
  /** Median over rounds of the mean time per operation, in microseconds. */
  microseconds: number;
  /** Statements sent per operation, begin and commit included. */
  roundTrips: number;
}

export interface LedgerMicroResult {
  operations: number;
  idempotentFirstWrite: OperationCost;
  replayOfCompletedKey: OperationCost;
  plainInsert: OperationCost;
  /** idempotentFirstWrite / plainInsert (time). Target ≤ 1.5. */
  firstWriteOverPlain: number;
  replayOverPlain: number;
  /** The plan of the replay's lookup, from EXPLAIN ANALYZE. */
  replayLookupPlan: string;
  /** How long the run waited for the server to be quiet before measuring (waitForQuietServer). */
  quietWaitMs: number;
}

/**
 * Waits until nothing else runs on the PostgreSQL server: no autovacuum worker and no other
 * client's statement, three polls in a row half a second apart (at most `timeoutMs`, then it
 * measures anyway). A single write costs well under a millisecond, so an autovacuum pass over
 * tables a load just wrote to, running beside it on a two-core machine, would be most of what a
 * microbenchmark measured. `thisDatabaseOnly` looks at the pool's own database alone (a test
 * beside other tests). Returns the milliseconds it waited.
 */
export async function waitForQuietServer(pool: pg.Pool, options: { timeoutMs?: number; thisDatabaseOnly?: boolean } = {}): Promise<number> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const started = Date.now();
  let quietPolls = 0;
  while (quietPolls < 3 && Date.now() - started < timeoutMs) {
    const { rows } = await pool.query<{ busy: number }>(
      `select count(*)::int as busy from pg_stat_activity
        where pid <> pg_backend_pid()
          and ($1::boolean is false or datname = current_database())
          and (backend_type = 'autovacuum worker' or (backend_type = 'client backend' and state = 'active'))`,
      [options.thisDatabaseOnly ?? false],
    );
    quietPolls = (rows[0]?.busy ?? 0) === 0 ? quietPolls + 1 : 0;
    if (quietPolls < 3) await sleep(500);
  }
  return Date.now() - started;
}

type Kind = 'idempotent' | 'replay' | 'plain';

/**
 * Per-operation cost of posting a charge to the ledger three ways, each in its own
 * transaction on one connection, one after another: an idempotent first write, the same call
 * again for a key already posted, and a plain insert of the same rows without idempotency.
 * Rounds of each kind alternate, so drift in a shared machine's load falls on all three.
 */
export async function runLedgerMicro(options: { databaseUrl: string; rounds: number; perRound: number; prefix?: string }): Promise<LedgerMicroResult> {
  const { rounds, perRound } = options;
  // Names this run's orders, so a second run into the same database (the scale step) does not collide.
  const prefix = options.prefix ?? 'micro';
  const ledgerPool = createPool({ connectionString: options.databaseUrl, max: 1, applicationName: 'order-payments-bench-ledger' });
  const plainPool = new pg.Pool({ connectionString: options.databaseUrl, max: 1, options: '-c search_path=bench_plain,public' });
  const ledgerCounter = countQueries(ledgerPool);
  const plainCounter = countQueries(plainPool);
  try {
    await ledgerPool.query(PLAIN_LEDGER_SQL);
    // One order per posting: the ledger allows one charge per order. Warm-up uses the first block.
    const total = (rounds + 1) * perRound;
    await ledgerPool.query(
      `insert into orders (order_id, tenant_id, customer_id, amount_minor, currency, sku, quantity, request_hash, workflow_id)
       select $2::text || '-' || g, 'default', 'cust-micro', 2500, 'usd', 'micro', 1, 'micro', 'micro' from generate_series(0, $1::int - 1) g`,
      [total, prefix],
    );

    const entry = (index: number): LedgerEntry => ({
      orderId: `${prefix}-${index}`,
      kind: 'charge',
      amountMinor: 2500,
      currency: 'usd',
      stripeObjectId: `pi_${prefix}_${index}`,
      idempotencyKey: `${prefix}-run/charge-payment/${index}`,
    });
    const postings = [
      { account: LedgerAccount.StripeBalance, direction: 'debit' },
      { account: LedgerAccount.CustomerPayments, direction: 'credit' },
    ];
    const plainInsert = (index: number) =>
      withTransaction(plainPool, async (client) => {
        const e = entry(index);
        const { rows } = await client.query<{ id: number }>(
          `insert into ledger_transactions (order_id, kind, amount_minor, currency, stripe_object_id)
           values ($1, $2, $3, $4, $5) returning id`,
          [e.orderId, e.kind, e.amountMinor, e.currency, e.stripeObjectId],
        );
        await client.query(
          `insert into ledger_postings (transaction_id, account, direction, amount_minor)
           select $1, account, direction, $4 from unnest($2::text[], $3::text[]) as p(account, direction)`,
          [rows[0]?.id, postings.map((p) => p.account), postings.map((p) => p.direction), e.amountMinor],
        );
      });
    const post = (index: number) => withTransaction(ledgerPool, (client) => postLedgerTransaction(client, entry(index)));

    const run: Record<Kind, (index: number) => Promise<unknown>> = {
      idempotent: post,
      // Replays cycle over the warm-up block, posted before any round.
      replay: (index) => post(index % perRound),
      plain: plainInsert,
    };
    const counterOf: Record<Kind, ReturnType<typeof countQueries>> = { idempotent: ledgerCounter, replay: ledgerCounter, plain: plainCounter };

    for (let i = 0; i < perRound; i++) {
      await post(i);
      await plainInsert(i);
    }
    const quietWaitMs = await waitForQuietServer(ledgerPool);

    const perOpMicros: Record<Kind, number[]> = { idempotent: [], replay: [], plain: [] };
    const roundTrips: Record<Kind, number> = { idempotent: 0, replay: 0, plain: 0 };
    const orders: Kind[][] = [
      ['idempotent', 'plain', 'replay'],
      ['plain', 'replay', 'idempotent'],
      ['replay', 'idempotent', 'plain'],
    ];
    for (let round = 0; round < rounds; round++) {
      const base = (round + 1) * perRound;
      for (const kind of orders[round % orders.length] ?? []) {
        const before = counterOf[kind].read().roundTrips;
        const t0 = performance.now();
        for (let i = 0; i < perRound; i++) await run[kind](base + i);
        perOpMicros[kind].push(((performance.now() - t0) * 1000) / perRound);
        roundTrips[kind] += counterOf[kind].read().roundTrips - before;
      }
    }

    const cost = (kind: Kind): OperationCost => ({
      microseconds: round1(percentile(perOpMicros[kind], 50)),
      roundTrips: roundTrips[kind] / (rounds * perRound),
    });
    const idempotentFirstWrite = cost('idempotent');
    const replayOfCompletedKey = cost('replay');
    const plain = cost('plain');
    const plan = await ledgerPool.query<{ 'QUERY PLAN': string }>(
      `explain (analyze, costs off, timing off, summary off)
       select id, request_hash from ledger_transactions where idempotency_key = $1`,
      [entry(0).idempotencyKey],
    );
    return {
      operations: rounds * perRound,
      idempotentFirstWrite,
      replayOfCompletedKey,
      plainInsert: plain,
      firstWriteOverPlain: round2(idempotentFirstWrite.microseconds / plain.microseconds),
      replayOverPlain: round2(replayOfCompletedKey.microseconds / plain.microseconds),
      replayLookupPlan: plan.rows.map((row) => row['QUERY PLAN'].trim()).join(' / '),
      quietWaitMs,
    };
  } finally {
    await ledgerPool.end();
    await plainPool.end();
  }
}

const round1 = (value: number) => Math.round(value * 10) / 10;
const round2 = (value: number) => Math.round(value * 100) / 100;

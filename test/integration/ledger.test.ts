// Proves the ledger's guarantees in PostgreSQL: racing identical postings write once (row 2), a
// reused key with another payload fails (row 3), balance (I4), append-only history, and I1.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/platform/db/transaction.js';
import { IdempotencyConflictError, LedgerDuplicateError } from '../../src/domain/failures.js';
import { postLedgerTransaction, type LedgerEntry } from '../../src/money/ledger/ledger.js';
import { recordOrder } from '../../src/orders/orders.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let db: TestDatabase;
let orderId: string;

async function newOrder(): Promise<string> {
  const id = `L-${randomUUID().slice(0, 8)}`;
  await recordOrder(
    db.pool,
    { orderId: id, tenantId: 'default', customerId: 'c-1', amount: 1500, currency: 'usd', paymentMethod: 'pm_card_visa', sku: 'S', quantity: 1 },
    `order-payment-${id}`,
  );
  return id;
}

beforeAll(async () => {
  db = await createTestDatabase();
  orderId = await newOrder();
});
afterAll(() => db.drop());

function entry(overrides: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    orderId,
    kind: 'charge',
    amountMinor: 1500,
    currency: 'usd',
    stripeObjectId: `pi_${randomUUID()}`,
    idempotencyKey: `${randomUUID()}/charge-payment`,
    ...overrides,
  };
}

describe('ledger', () => {
  it('row 2: identical postings racing with one key on separate connections write one row and answer all alike', async () => {
    // A zombie attempt and its retry can post at the same moment. The race is won or lost inside
    // PostgreSQL's index checks, so it is run many times: one lost race in any round is a failure.
    for (let round = 0; round < 40; round += 1) {
      const posting = entry({ orderId: await newOrder() });
      const results = await Promise.all(
        Array.from({ length: 8 }, () => withTransaction(db.pool, (client) => postLedgerTransaction(client, posting))),
      );
      expect(new Set(results.map((result) => result.transactionId)).size).toBe(1);
      expect(results.filter((result) => !result.replayed)).toHaveLength(1);
      const { rows } = await db.pool.query<{ transactions: number; postings: number }>(
        `select (select count(*)::int from ledger_transactions where idempotency_key = $1) as transactions,
                (select count(*)::int from ledger_postings p join ledger_transactions t on t.id = p.transaction_id
                  where t.idempotency_key = $1) as postings`,
        [posting.idempotencyKey],
      );
      expect(rows[0]).toEqual({ transactions: 1, postings: 2 });
    }
  });

  it('row 3 (ledger): one key with a different payload fails loudly and applies nothing', async () => {
    const posting = entry({ kind: 'refund' });
    await withTransaction(db.pool, (client) => postLedgerTransaction(client, posting));
    await expect(
      withTransaction(db.pool, (client) => postLedgerTransaction(client, { ...posting, amountMinor: 1499 })),
    ).rejects.toBeInstanceOf(IdempotencyConflictError);
    const { rows } = await db.pool.query<{ amount_minor: number }>(
      'select amount_minor from ledger_transactions where idempotency_key = $1',
      [posting.idempotencyKey],
    );
    expect(rows).toEqual([{ amount_minor: 1500 }]);
  });

  it('I4: an unbalanced transaction cannot commit, whoever writes it', async () => {
    const failing = withTransaction(db.pool, async (client) => {
      const { rows } = await client.query<{ id: number }>(
        `insert into ledger_transactions (order_id, kind, amount_minor, currency, stripe_object_id, idempotency_key, request_hash)
         values ($1, 'refund', 100, 'usd', $2, $3, 'x') returning id`,
        [orderId, `re_${randomUUID()}`, randomUUID()],
      );
      await client.query(
        `insert into ledger_postings (transaction_id, account, direction, amount_minor) values ($1, 'a', 'debit', 100), ($1, 'b', 'credit', 99)`,
        [rows[0]?.id],
      );
    });
    await expect(failing).rejects.toThrow(/does not balance/);
  });

  it('I4: a transaction with no postings cannot commit either', async () => {
    const failing = db.pool.query(
      `insert into ledger_transactions (order_id, kind, amount_minor, currency, stripe_object_id, idempotency_key, request_hash)
       values ($1, 'refund', 100, 'usd', $2, $3, 'x')`,
      [orderId, `re_${randomUUID()}`, randomUUID()],
    );
    await expect(failing).rejects.toThrow(/does not balance/);
  });

  it('keeps history append-only: postings cannot be edited or deleted', async () => {
    await expect(db.pool.query('update ledger_postings set amount_minor = amount_minor + 1')).rejects.toThrow(/append-only/);
    await expect(db.pool.query('delete from ledger_transactions')).rejects.toThrow(/append-only/);
  });

  it('I1 at the ledger: a second charge for one order under another key is refused by a constraint', async () => {
    const other = await newOrder();
    const first = entry({ orderId: other });
    await withTransaction(db.pool, (client) => postLedgerTransaction(client, first));
    const second = withTransaction(db.pool, (client) => postLedgerTransaction(client, entry({ orderId: other })));
    await expect(second).rejects.toBeInstanceOf(LedgerDuplicateError);
    await expect(second).rejects.toThrow(new RegExp(`ledger_one_charge_per_order.*'${first.idempotencyKey}'`));
  });

  it('I1 at the ledger: one Stripe object posted under another key is refused, even by a refund', async () => {
    const first = entry({ kind: 'refund', stripeObjectId: `re_${randomUUID()}` });
    await withTransaction(db.pool, (client) => postLedgerTransaction(client, first));
    const second = withTransaction(db.pool, (client) =>
      postLedgerTransaction(client, entry({ kind: 'refund', stripeObjectId: first.stripeObjectId })),
    );
    await expect(second).rejects.toThrow(new RegExp(`ledger_transactions_stripe_object_id_key.*'${first.idempotencyKey}'`));
    const { rows } = await db.pool.query<{ n: number }>(
      'select count(*)::int as n from ledger_transactions where stripe_object_id = $1',
      [first.stripeObjectId],
    );
    expect(rows[0]?.n).toBe(1);
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/transaction.js';
import { IdempotencyConflictError } from '../../src/idempotency/idempotency-conflict-error.js';
import { postLedgerTransaction, type LedgerEntry } from '../../src/ledger/ledger.js';
import { recordOrder } from '../../src/orders/orders.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let db: TestDatabase;
let orderId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  orderId = `L-${randomUUID().slice(0, 8)}`;
  await recordOrder(
    db.pool,
    { orderId, customerId: 'c-1', amount: 1500, currency: 'usd', paymentMethod: 'pm_card_visa', sku: 'S', quantity: 1 },
    `order-payment-${orderId}`,
  );
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
  it('row 2: two identical postings racing with one key on separate connections write one row and answer both alike', async () => {
    const posting = entry();
    const results = await Promise.all(
      Array.from({ length: 8 }, () => withTransaction(db.pool, (client) => postLedgerTransaction(client, posting))),
    );
    const ids = new Set(results.map((result) => result.transactionId));
    expect(ids.size).toBe(1);
    expect(results.filter((result) => !result.replayed)).toHaveLength(1);
    const { rows } = await db.pool.query<{ transactions: number; postings: number }>(
      `select (select count(*)::int from ledger_transactions where idempotency_key = $1) as transactions,
              (select count(*)::int from ledger_postings p join ledger_transactions t on t.id = p.transaction_id
                where t.idempotency_key = $1) as postings`,
      [posting.idempotencyKey],
    );
    expect(rows[0]).toEqual({ transactions: 1, postings: 2 });
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
    const other = `L-${randomUUID().slice(0, 8)}`;
    await recordOrder(
      db.pool,
      { orderId: other, customerId: 'c-1', amount: 1500, currency: 'usd', paymentMethod: 'pm_card_visa', sku: 'S', quantity: 1 },
      `order-payment-${other}`,
    );
    await withTransaction(db.pool, (client) => postLedgerTransaction(client, entry({ orderId: other })));
    await expect(
      withTransaction(db.pool, (client) => postLedgerTransaction(client, entry({ orderId: other }))),
    ).rejects.toThrow(/ledger_one_charge_per_order/);
  });
});

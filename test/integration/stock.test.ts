// Proves stock invariant I5: allocations decrement once, never below zero, are released exactly
// once, and a release under a key closes it against a late allocation.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/platform/db/transaction.js';
import { AllocationReleasedError, OutOfStockError } from '../../src/domain/failures.js';
import { allocateStock, availableStock, releaseStock, setStock } from '../../src/orders/stock.js';
import { recordOrder } from '../../src/orders/orders.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

async function newOrder(sku: string, quantity: number, tenantId = 'default'): Promise<string> {
  const orderId = `S-${randomUUID().slice(0, 8)}`;
  await recordOrder(
    db.pool,
    { orderId, tenantId, customerId: 'c-1', amount: 100, currency: 'usd', paymentMethod: 'pm_card_visa', sku, quantity },
    `order-payment-${orderId}`,
  );
  return orderId;
}

async function available(sku: string): Promise<number | undefined> {
  const { rows } = await db.pool.query<{ available: number }>('select available from inventory where sku = $1', [sku]);
  return rows[0]?.available;
}

describe('stock', () => {
  it('I5: a retried allocation decrements once, and the release returns the units exactly once', async () => {
    const sku = `sku-${randomUUID().slice(0, 6)}`;
    await setStock(db.pool, sku, 5);
    const orderId = await newOrder(sku, 2);
    const allocation = { idempotencyKey: `${randomUUID()}/allocate-stock`, orderId, tenantId: 'default', sku, quantity: 2 };
    const attempts = await Promise.all(
      Array.from({ length: 4 }, () => withTransaction(db.pool, (client) => allocateStock(client, allocation))),
    );
    expect(attempts.filter((attempt) => !attempt.replayed)).toHaveLength(1);
    expect(await available(sku)).toBe(3);

    const release = { allocationKey: allocation.idempotencyKey, releaseKey: `${randomUUID()}/release-stock`, orderId, tenantId: 'default', sku, quantity: 2 };
    const releases = await Promise.all(
      Array.from({ length: 4 }, () => withTransaction(db.pool, (client) => releaseStock(client, release))),
    );
    expect(releases.map((r) => r.released).sort()).toEqual([0, 0, 0, 2]);
    expect(await available(sku)).toBe(5);
  });

  it('I5: stock never goes negative when orders race for the last units', async () => {
    const sku = `sku-${randomUUID().slice(0, 6)}`;
    await setStock(db.pool, sku, 1);
    const orders = await Promise.all(Array.from({ length: 6 }, () => newOrder(sku, 1)));
    const outcomes = await Promise.allSettled(
      orders.map((orderId) =>
        withTransaction(db.pool, (client) =>
          allocateStock(client, { idempotencyKey: `${randomUUID()}/allocate-stock`, orderId, sku, quantity: 1 }),
        ),
      ),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const refusals = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(refusals.every((outcome) => outcome.reason instanceof OutOfStockError)).toBe(true);
    expect(await available(sku)).toBe(0);
    const { rows } = await db.pool.query<{ count: number }>('select count(*)::int as count from stock_allocations where sku = $1', [sku]);
    expect(rows[0]?.count).toBe(1);
  });

  it('releasing an allocation that never happened returns nothing, and closes the key: a late allocation under it takes no stock', async () => {
    const sku = `sku-${randomUUID().slice(0, 6)}`;
    await setStock(db.pool, sku, 3);
    const orderId = await newOrder(sku, 1);
    const allocationKey = `${randomUUID()}/reserve-stock`;
    const released = await withTransaction(db.pool, (client) =>
      releaseStock(client, { allocationKey, releaseKey: `${randomUUID()}/release-stock`, orderId, tenantId: 'default', sku, quantity: 1 }),
    );
    expect(released).toEqual({ released: 0 });
    // The attempt that was still running (its worker stalled past its timeout, or the run before
    // a reset) commits now: it is refused as released, and the stock is untouched.
    await expect(
      withTransaction(db.pool, (client) => allocateStock(client, { idempotencyKey: allocationKey, orderId, sku, quantity: 1 })),
    ).rejects.toBeInstanceOf(AllocationReleasedError);
    expect(await available(sku)).toBe(3);
    const { rows } = await db.pool.query<{ state: string }>('select state from stock_allocations where idempotency_key = $1', [allocationKey]);
    expect(rows).toEqual([{ state: 'released' }]);
  });

  it('an allocation released by a transaction that began in the same microsecond (the same now()) still returns its units', async () => {
    // Two transactions that begin together can share now(): modelled here by one transaction, in
    // which the allocation's created_at and the release's released_at are the same instant.
    const sku = `sku-${randomUUID().slice(0, 6)}`;
    await setStock(db.pool, sku, 4);
    const orderId = await newOrder(sku, 2);
    const allocationKey = `${randomUUID()}/reserve-stock`;
    const released = await withTransaction(db.pool, async (client) => {
      await allocateStock(client, { idempotencyKey: allocationKey, orderId, sku, quantity: 2 });
      return releaseStock(client, { allocationKey, releaseKey: `${randomUUID()}/release-stock`, orderId, tenantId: 'default', sku, quantity: 2 });
    });
    expect(released).toEqual({ released: 2 });
    expect(await available(sku)).toBe(4);
    const { rows } = await db.pool.query<{ state: string; tombstone: boolean; same_instant: boolean }>(
      'select state, tombstone, created_at = released_at as same_instant from stock_allocations where idempotency_key = $1',
      [allocationKey],
    );
    expect(rows).toEqual([{ state: 'released', tombstone: false, same_instant: true }]);
  });

  it('a release racing an allocation under the same key: whichever commits first, the units end in stock and the key closed', async () => {
    for (let round = 0; round < 10; round++) {
      const sku = `sku-${randomUUID().slice(0, 6)}`;
      await setStock(db.pool, sku, 4);
      const orderId = await newOrder(sku, 2);
      const allocationKey = `${randomUUID()}/reserve-stock`;
      const [allocated, released] = await Promise.allSettled([
        withTransaction(db.pool, (client) => allocateStock(client, { idempotencyKey: allocationKey, orderId, sku, quantity: 2 })),
        withTransaction(db.pool, (client) => releaseStock(client, { allocationKey, releaseKey: `${randomUUID()}/release-stock`, orderId, tenantId: 'default', sku, quantity: 2 })),
      ]);
      expect(released.status).toBe('fulfilled');
      // Allocation first: the release returned its 2 units. Release first: the allocation was refused.
      if (allocated.status === 'fulfilled') expect(released).toMatchObject({ value: { released: 2 } });
      else expect(allocated.reason).toBeInstanceOf(AllocationReleasedError);
      expect(await available(sku)).toBe(4);
      const { rows } = await db.pool.query<{ state: string }>('select state from stock_allocations where idempotency_key = $1', [allocationKey]);
      expect(rows).toEqual([{ state: 'released' }]);
    }
  });

  it('releasing for an unknown SKU writes nothing: nothing could ever be allocated for it', async () => {
    const orderId = await newOrder('no-such-sku-release', 1);
    const allocationKey = `${randomUUID()}/reserve-stock`;
    const released = await withTransaction(db.pool, (client) =>
      releaseStock(client, { allocationKey, releaseKey: 'x', orderId, tenantId: 'default', sku: 'no-such-sku-release', quantity: 1 }),
    );
    expect(released).toEqual({ released: 0 });
    const { rows } = await db.pool.query('select 1 from stock_allocations where idempotency_key = $1', [allocationKey]);
    expect(rows).toEqual([]);
  });

  it('an unknown SKU is out of stock, not an error to retry', async () => {
    const orderId = await newOrder('no-such-sku', 1);
    await expect(
      withTransaction(db.pool, (client) =>
        allocateStock(client, { idempotencyKey: `${randomUUID()}/allocate-stock`, orderId, sku: 'no-such-sku', quantity: 1 }),
      ),
    ).rejects.toMatchObject({ name: 'OutOfStockError', known: false });
  });
});

describe('stock after a compensation', () => {
  it('refuses to replay a released allocation as held, so a reset run cannot report stock it gave back', async () => {
    const sku = `sku-${randomUUID().slice(0, 6)}`;
    await setStock(db.pool, sku, 2);
    const orderId = await newOrder(sku, 1);
    const allocation = { idempotencyKey: `${randomUUID()}/allocate-stock`, orderId, sku, quantity: 1 };
    await withTransaction(db.pool, (client) => allocateStock(client, allocation));
    await withTransaction(db.pool, (client) =>
      releaseStock(client, { allocationKey: allocation.idempotencyKey, releaseKey: `${randomUUID()}/release-stock`, orderId, tenantId: 'default', sku, quantity: 1 }),
    );
    await expect(withTransaction(db.pool, (client) => allocateStock(client, allocation))).rejects.toBeInstanceOf(
      AllocationReleasedError,
    );
    expect(await available(sku)).toBe(2);
  });
});

describe('stock is its tenant’s own', () => {
  const reserve = (orderId: string, sku: string, quantity: number) =>
    withTransaction(db.pool, (client) => allocateStock(client, { idempotencyKey: `${randomUUID()}/reserve-stock`, orderId, sku, quantity }));

  it("tenant A can neither reserve, probe nor drain tenant B's SKU: it answers as a SKU nobody stocks", async () => {
    const sku = `sku-b-${randomUUID().slice(0, 6)}`;
    await setStock(db.pool, sku, 5, 'tenant-b');
    // Within B's stock, beyond it, and a SKU nobody has: one and the same answer, and nothing taken.
    const answers = [];
    for (const [what, quantity] of [[sku, 1], [sku, 1000], [`sku-none-${randomUUID().slice(0, 6)}`, 1]] as const) {
      const orderId = await newOrder(what, quantity, 'tenant-a');
      answers.push(await reserve(orderId, what, quantity).then(() => 'reserved', (error: unknown) => error));
    }
    for (const answer of answers) expect(answer).toMatchObject({ name: 'OutOfStockError', known: false });
    expect((answers as Error[]).map((error) => error.message.replace(/'[^']*'/, "'<sku>'"))).toEqual(Array(3).fill("unknown SKU '<sku>'"));
    expect(await availableStock(db.pool, 'tenant-b', sku)).toBe(5);
    const { rows } = await db.pool.query('select 1 from stock_allocations where sku = $1', [sku]);
    expect(rows).toEqual([]);
  });

  it('two tenants with the same SKU each reserve and release their own units', async () => {
    const sku = `sku-shared-${randomUUID().slice(0, 6)}`;
    await setStock(db.pool, sku, 3, 'tenant-a');
    await setStock(db.pool, sku, 7, 'tenant-b');
    const orderA = await newOrder(sku, 3, 'tenant-a');
    const allocationKey = `${randomUUID()}/reserve-stock`;
    await withTransaction(db.pool, (client) => allocateStock(client, { idempotencyKey: allocationKey, orderId: orderA, sku, quantity: 3 }));
    // A's stock is gone; B's is whole, and a fourth unit for A is refused although B has seven.
    expect([await availableStock(db.pool, 'tenant-a', sku), await availableStock(db.pool, 'tenant-b', sku)]).toEqual([0, 7]);
    await expect(reserve(await newOrder(sku, 1, 'tenant-a'), sku, 1)).rejects.toMatchObject({ name: 'OutOfStockError', known: true });
    await withTransaction(db.pool, (client) =>
      releaseStock(client, { allocationKey, releaseKey: `${randomUUID()}/release-stock`, orderId: orderA, tenantId: 'tenant-a', sku, quantity: 3 }),
    );
    expect([await availableStock(db.pool, 'tenant-a', sku), await availableStock(db.pool, 'tenant-b', sku)]).toEqual([3, 7]);
  });
});

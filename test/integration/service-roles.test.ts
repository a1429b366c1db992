// Least privilege (migration 017): each service's login can do what its code does and nothing the
// other services do; the API's cannot write the ledger, its keys, stock or the outbox. Every table
// belongs to the migrator, and every table is granted to a service, or deliberately to none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/api/auth/api-keys.js';
import { recordOrder } from '../../src/orders/orders.js';
import { MIGRATOR_ROLE } from '../../src/platform/db/migrate.js';
import { SERVICE_ROLES } from '../../src/platform/db/service-roles.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let db: TestDatabase;
let transactionId: number;

/** Tables no service is granted: the migrator's bookkeeping. */
const MIGRATOR_ONLY = ['schema_migrations'];

beforeAll(async () => {
  db = await createTestDatabase();
  await recordOrder(
    db.pool,
    { orderId: 'R-1', tenantId: 'default', customerId: 'c', amount: 100, currency: 'usd', paymentMethod: 'pm_card_visa', sku: 's', quantity: 1 },
    'order-payment-R-1',
  );
  const { rows } = await db.pool.query<{ id: number }>(
    `with t as (insert into ledger_transactions (order_id, kind, amount_minor, currency, stripe_object_id, idempotency_key, request_hash)
                values ('R-1', 'charge', 100, 'usd', 'pi_r1', 'k-r1', 'h') returning id),
          d as (insert into ledger_postings select id, 'cash', 'debit', 100 from t),
          c as (insert into ledger_postings select id, 'revenue', 'credit', 100 from t)
     select id from t`,
  );
  transactionId = rows[0]?.id ?? 0;
});
afterAll(() => db.drop());

const refused = { code: '42501' }; // insufficient_privilege

describe("the API's role", () => {
  it('cannot insert a ledger posting, nor a ledger transaction', async () => {
    const api = db.servicePool('api');
    await expect(api.query(`insert into ledger_postings values ($1, 'cash', 'debit', 1)`, [transactionId])).rejects.toMatchObject(refused);
    await expect(
      api.query(
        `insert into ledger_transactions (order_id, kind, amount_minor, currency, stripe_object_id, idempotency_key, request_hash)
         values ('R-1', 'refund', 100, 'usd', 're_forged', 'k-forged', 'h')`,
      ),
    ).rejects.toMatchObject(refused);
    const { rows } = await db.pool.query<{ n: number }>('select count(*)::int as n from ledger_postings');
    expect(rows[0]?.n).toBe(2);
  });

  it('reads API keys but cannot mint, revoke or delete one; cannot touch stock, payment keys or the outbox', async () => {
    const api = db.servicePool('api');
    await createApiKey(db.pool, 'tenant-roles');
    expect((await api.query('select tenant_id from api_keys')).rows).toEqual([{ tenant_id: 'tenant-roles' }]);
    await expect(createApiKey(api, 'tenant-roles')).rejects.toMatchObject(refused);
    await expect(api.query('update api_keys set revoked_at = null')).rejects.toMatchObject(refused);
    await expect(api.query('delete from api_keys')).rejects.toMatchObject(refused);
    await expect(api.query('update inventory set available = 0')).rejects.toMatchObject(refused);
    await expect(api.query('select * from activity_idempotency')).rejects.toMatchObject(refused);
    await expect(api.query(`insert into outbox (event_type, order_id, payload) values ('order.paid', 'R-1', '{}')`)).rejects.toMatchObject(refused);
    await expect(api.query('update orders set status = $1', ['completed'])).rejects.toMatchObject(refused);
  });
});

describe('the other services', () => {
  it('the outbox dispatcher reads and marks the outbox and reads nothing else', async () => {
    const outbox = db.servicePool('outbox');
    expect((await outbox.query('select count(*)::int as n from outbox')).rows).toEqual([{ n: 0 }]);
    for (const statement of ['select * from orders', 'select * from receipts', 'select * from api_keys', 'delete from outbox', 'insert into processed_messages values ($1, $2)']) {
      await expect(outbox.query(statement, statement.includes('$1') ? ['x', 'y'] : [])).rejects.toMatchObject(refused);
    }
  });

  it('the receipts consumer writes receipts and its inbox, and cannot read orders, the outbox or the ledger', async () => {
    const receipts = db.servicePool('receipts');
    await receipts.query(`insert into processed_messages (subscriber_id, message_id) values ('receipts', 'm-1') on conflict (subscriber_id, message_id) do nothing`);
    for (const statement of ['select * from orders', 'select * from outbox', 'select * from ledger_transactions', 'delete from processed_messages']) {
      await expect(receipts.query(statement)).rejects.toMatchObject(refused);
    }
  });

  it('the worker cannot read API keys or Idempotency-Key records, write receipts, or rewrite the ledger', async () => {
    const worker = db.servicePool('worker');
    for (const statement of ['select * from api_keys', 'select * from api_idempotency', 'select * from receipts', 'insert into inventory (tenant_id, sku, available) values ($1, $2, 1)']) {
      await expect(worker.query(statement, statement.includes('$1') ? ['default', 'forged'] : [])).rejects.toMatchObject(refused);
    }
    // The ledger is append-only twice over: no role may update it, and its trigger refuses an owner too.
    await expect(worker.query('update ledger_postings set amount_minor = 1')).rejects.toMatchObject(refused);
  });

  it('no service may create objects, and none can connect as another', async () => {
    for (const pool of [db.servicePool('worker'), db.servicePool('api')]) {
      await expect(pool.query('create table planted (x int)')).rejects.toMatchObject(refused);
      await expect(pool.query(`set role ${MIGRATOR_ROLE}`)).rejects.toMatchObject(refused);
    }
    await expect(db.servicePool('api').query(`set role ${SERVICE_ROLES.worker}`)).rejects.toMatchObject(refused);
  });
});

describe('the schema', () => {
  it('every table, sequence and function belongs to the migrator, whichever migration made it', async () => {
    const { rows } = await db.pool.query<{ name: string; owner: string }>(
      `select c.relname as name, pg_get_userbyid(c.relowner) as owner from pg_class c
        where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p', 'S')
       union all
       select p.proname, pg_get_userbyid(p.proowner) from pg_proc p where p.pronamespace = 'public'::regnamespace`,
    );
    expect(rows.length).toBeGreaterThan(15);
    expect(rows.filter((row) => row.owner !== MIGRATOR_ROLE)).toEqual([]);
  });

  it('every table is granted to at least one service, or is named here as the migrator’s alone (grant a new table in its migration: docs/security.md)', async () => {
    const { rows } = await db.pool.query<{ table: string }>(
      `select c.relname as table from pg_class c
        where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p')
          and not exists (select 1 from unnest($1::text[]) r where has_table_privilege(r, c.oid, 'select, insert, update, delete'))
        order by 1`,
      [Object.values(SERVICE_ROLES)],
    );
    expect(rows.map((row) => row.table)).toEqual(MIGRATOR_ONLY);
  });
});

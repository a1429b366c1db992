// Proves a PostgreSQL backend terminated mid-transaction, or under a checked-out client, fails only
// that statement or transaction: the pool and the worker process carry on (a chaos-run finding).
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/platform/db/transaction.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * Found by the chaos run: a worker died when pg_terminate_backend hit a connection that was
 * checked out of the pool between two statements of a transaction. The server's notice arrives
 * as an 'error' event on the client, not through a query, and an 'error' event nobody listens
 * to ends a Node process.
 */
describe('a PostgreSQL backend terminated mid-transaction', () => {
  let db: TestDatabase;
  let operator: pg.Client;
  beforeAll(async () => {
    db = await createTestDatabase({ migrated: false });
    operator = new pg.Client({ connectionString: db.url });
    await operator.connect();
  });
  afterAll(async () => {
    await operator.end();
    await db.drop();
  });

  it('fails that transaction, and the pool and the process carry on', async () => {
    const attempt = withTransaction(db.pool, async (client) => {
      const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      await operator.query('select pg_terminate_backend($1)', [rows[0]?.pid]);
      // Between statements: the termination reaches the client while no query is running.
      await sleep(300);
      await client.query('select 1');
    });

    await expect(attempt).rejects.toThrow(/connection/i);
    const { rows } = await db.pool.query<{ one: number }>('select 1 as one');
    expect(rows).toEqual([{ one: 1 }]);
  });

  it('fails the next statement of any checked-out client, inside a transaction or not, and the process carries on', async () => {
    const client = await db.pool.connect();
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    await operator.query('select pg_terminate_backend($1)', [rows[0]?.pid]);
    await sleep(300);

    const next = client.query('select 1');
    await expect(next).rejects.toThrow(/connection/i);
    client.release(new Error('backend terminated'));
    expect((await db.pool.query<{ one: number }>('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });
});

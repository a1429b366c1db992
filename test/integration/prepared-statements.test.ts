// The pool's prepared statements against a real PostgreSQL: a repeated statement with parameters
// is parsed once per connection and answers as before; `*` statements, statements without
// parameters and a failed parse stay as they were.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/platform/db/pool.js';
import { preparedStatementName, preparedStatementsEnabled } from '../../src/platform/db/prepared-statements.js';
import { withTransaction } from '../../src/platform/db/transaction.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ migrated: false });
  await db.pool.query('create table notes (id text primary key, body text not null)');
});
afterAll(async () => {
  await db.drop();
});

/** The statements the backend serving this client holds prepared, by name. */
async function preparedOn(client: { query: (text: string) => Promise<{ rows: { name: string; statement: string }[] }> }) {
  const { rows } = await client.query('select name, statement from pg_prepared_statements');
  return rows;
}

describe('createPool prepared statements', () => {
  it('prepares a repeated parameterized statement once per connection and answers as an unnamed one does', async () => {
    const pool = createPool({ connectionString: db.url, max: 1 });
    try {
      const insert = 'insert into notes (id, body) values ($1, $2) returning body';
      for (let index = 0; index < 5; index++) {
        const { rows } = await pool.query<{ body: string }>(insert, [`a-${index}`, `body ${index}`]);
        expect(rows).toEqual([{ body: `body ${index}` }]);
      }
      const { rows } = await pool.query<{ count: number }>({ text: 'select count(*)::int as count from notes where id like $1', values: ['a-%'] });
      expect(rows).toEqual([{ count: 5 }]);
      const client = await pool.connect();
      try {
        const prepared = await preparedOn(client);
        expect(prepared.map((row) => row.name).sort()).toEqual([preparedStatementName(insert), preparedStatementName('select count(*)::int as count from notes where id like $1')].sort());
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  });

  it('leaves statements without parameters and `*` statements unnamed', async () => {
    const pool = createPool({ connectionString: db.url, max: 1 });
    try {
      await pool.query('select id from notes');
      const { rows } = await pool.query<{ id: string }>('select * from notes where id = $1', ['a-0']);
      expect(rows[0]?.id).toBe('a-0');
      await pool.query('delete from notes where id = $1 returning *', ['missing']);
      const client = await pool.connect();
      try {
        expect(await preparedOn(client)).toEqual([]);
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  });

  it('keeps a statement prepared through a rolled-back transaction, and parses again one that failed to parse', async () => {
    const pool = createPool({ connectionString: db.url, max: 1 });
    try {
      const insert = 'insert into notes (id, body) values ($1, $2)';
      await expect(
        withTransaction(pool, async (client) => {
          await client.query(insert, ['t-1', 'kept?']);
          await client.query(insert, ['t-1', 'duplicate']);
        }),
      ).rejects.toThrow(/duplicate key/);
      await pool.query(insert, ['t-2', 'after the rollback']);
      const { rows } = await pool.query<{ id: string }>("select id from notes where id like 't-%' order by id");
      expect(rows).toEqual([{ id: 't-2' }]);

      const broken = 'select body from no_such_table where id = $1';
      await expect(pool.query(broken, ['x'])).rejects.toThrow(/no_such_table/);
      await pool.query('create table no_such_table (id text, body text)');
      await pool.query("insert into no_such_table values ('x', 'now it exists')");
      const { rows: found } = await pool.query<{ body: string }>(broken, ['x']);
      expect(found).toEqual([{ body: 'now it exists' }]);
    } finally {
      await pool.end();
    }
  });

  it('re-plans a prepared statement after a migration changed the type of a column it returns, failing one attempt', async () => {
    const pool = createPool({ connectionString: db.url, max: 1 });
    try {
      await pool.query('create table counters (id text primary key, hits integer not null)');
      await pool.query("insert into counters values ('c', 1)");
      const read = 'select hits from counters where id = $1';
      expect((await pool.query<{ hits: number }>(read, ['c'])).rows).toEqual([{ hits: 1 }]);
      await pool.query('alter table counters alter column hits type text');
      // The server refuses the first execution that meets the changed row type, then re-plans it.
      await expect(pool.query(read, ['c'])).rejects.toThrow(/cached plan must not change result type/);
      expect((await pool.query<{ hits: string }>(read, ['c'])).rows).toEqual([{ hits: '1' }]);
    } finally {
      await pool.end();
    }
  });

  it('sends every statement unnamed with prepareStatements: false', async () => {
    const pool = createPool({ connectionString: db.url, max: 1, prepareStatements: false });
    try {
      await pool.query('select body from notes where id = $1', ['a-1']);
      const client = await pool.connect();
      try {
        expect(await preparedOn(client)).toEqual([]);
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  });

  it('reads DATABASE_PREPARED_STATEMENTS: on unless off, and a clear error for anything else', () => {
    expect(preparedStatementsEnabled({})).toBe(true);
    expect(preparedStatementsEnabled({ DATABASE_PREPARED_STATEMENTS: 'on' })).toBe(true);
    expect(preparedStatementsEnabled({ DATABASE_PREPARED_STATEMENTS: 'OFF' })).toBe(false);
    expect(() => preparedStatementsEnabled({ DATABASE_PREPARED_STATEMENTS: 'sometimes' })).toThrow(/DATABASE_PREPARED_STATEMENTS: must be on or off, got 'sometimes'/);
  });
});

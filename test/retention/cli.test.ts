// Proves `npm run reap -- --once` sweeps every table and reports per table, and refuses a horizon
// below its floor, a missing --once and an unreachable database in one line each.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { runCli } from '../support/run-cli.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

const reap = (args: string[], env: Record<string, string> = {}) => runCli('src/reap.ts', args, { DATABASE_URL: db.url, ...env });

describe('npm run reap', () => {
  it('--once sweeps every table and prints what it deleted per table (exit 0)', async () => {
    await db.pool.query(
      `insert into activity_idempotency (scope, idempotency_key, request_hash, state, result, expires_at) values
         ('stripe.capture', 'gone', 'h', 'completed', '{}', now() - interval '1 minute'),
         ('stripe.capture', 'open', 'h', 'pending', null, now() - interval '1 minute')`,
    );
    const result = await reap(['--once']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout.split('\n').filter(Boolean)).toEqual([
      'reap: activity_idempotency   1 deleted',
      'reap: outbox                 0 deleted',
      'reap: stripe_object_states   0 deleted',
      'reap: stripe_webhook_events  0 deleted',
      'reap: processed_messages     0 deleted',
      'reap: 1 expired activity key(s) still open (pending or processing) were kept; npm run reconcile says which orders need a look',
    ]);
    const json = await reap(['--once', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ deleted: { activity_idempotency: 0 }, expiredOpenKeys: 1, failures: [] });
  });

  it('refuses a horizon below its floor, a missing --once and an unreachable database, one line each', async () => {
    const short = await reap(['--once'], { RETENTION_OUTBOX_SENT_DAYS: '7' });
    expect(short.code).toBe(2);
    expect(short.stderr.trim()).toBe(
      "reap: RETENTION_OUTBOX_SENT_DAYS: 7 days is shorter than its floor of 28 days (the activity keys' floor: a replayed transaction must still meet its announcement); raise it",
    );
    const bare = await reap([]);
    expect(bare.code).toBe(2);
    expect(bare.stderr.trim()).toBe("reap: error: required option '--once' not specified");
    const down = await reap(['--once'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
    expect(down.code).toBe(3);
    expect(down.stderr.trim()).toMatch(/^reap: the sweep could not run: .+$/);
  });
});

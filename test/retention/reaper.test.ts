// Proves the reaper deletes only rows past their horizon, in batches, passing over locked rows;
// and the retention settings refuse a horizon shorter than its floor.
import type { QueryResult } from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/platform/config/config-error.js';
import { reapExpired } from '../../src/operations/retention/reaper.js';
import { DEFAULT_RETENTION, loadRetentionSettings } from '../../src/operations/retention/settings.js';
import { STRIPE_WEBHOOK_SUBSCRIBER } from '../../src/messaging/webhooks/record-stripe-event.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const DAY = 24 * 60 * 60 * 1000;
const HORIZONS = { ...DEFAULT_RETENTION, batchSize: 2 };

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

beforeEach(async () => {
  await db.pool.query('truncate activity_idempotency, outbox, processed_messages, stripe_object_states, stripe_webhook_events, orders cascade');
});

/** Seeds `count` activity keys in `state` whose `expires_at` is `expiresInDays` away (negative: past). */
async function seedKeys(prefix: string, count: number, expiresInDays: number, state: string) {
  await db.pool.query(
    `insert into activity_idempotency (scope, idempotency_key, request_hash, state, result, expires_at)
     select 'stripe.capture', $1 || i, 'h', $3, case when $3 = 'pending' then null else '{}'::jsonb end, now() + make_interval(days => $2)
       from generate_series(1, $4) i`,
    [prefix, expiresInDays, state, count],
  );
}

async function seedOutbox(prefix: string, count: number, sentDaysAgo: number | null) {
  for (let i = 1; i <= count; i += 1) {
    const orderId = `${prefix}-${i}`;
    await db.pool.query(
      `insert into orders (order_id, tenant_id, customer_id, amount_minor, currency, sku, quantity, request_hash, workflow_id)
       values ($1, 'default', 'c', 100, 'usd', 's', 1, 'h', 'w-' || $1)`,
      [orderId],
    );
    await db.pool.query(
      `insert into outbox (event_type, order_id, payload, created_at, sent_at)
       values ('order.paid', $1, '{}', now() - make_interval(days => $2), case when $3 then now() - make_interval(days => $2) end)`,
      [orderId, sentDaysAgo ?? 0, sentDaysAgo !== null],
    );
  }
}

async function seedInbox(subscriber: string, prefix: string, count: number, daysAgo: number) {
  await db.pool.query(
    `insert into processed_messages (subscriber_id, message_id, processed_at)
     select $1, $2 || i, now() - make_interval(days => $3) from generate_series(1, $4) i`,
    [subscriber, prefix, daysAgo, count],
  );
}

/**
 * A recorded webhook event `daysAgo` old with its inbox receipt; with `latestWord`, the state of its
 * PaymentIntent points at it, in `status`, unchanged for `stateDaysAgo`.
 */
async function seedWebhookEvent(eventId: string, daysAgo: number, latestWord: boolean, status = 'succeeded', stateDaysAgo = 0) {
  await seedInbox(STRIPE_WEBHOOK_SUBSCRIBER, eventId, 1, daysAgo);
  await db.pool.query(
    `insert into stripe_webhook_events (event_id, event_type, object_id, event_created, received_at, applied)
     values ($1 || '1', 'payment_intent.succeeded', 'pi_' || $1, 1, now() - make_interval(days => $2), $3)`,
    [eventId, daysAgo, latestWord],
  );
  if (latestWord) {
    await db.pool.query(
      `insert into stripe_object_states (object_id, object_type, status, status_rank, event_id, event_created, updated_at)
       values ('pi_' || $1, 'payment_intent', $2, 3, $1 || '1', 1, now() - make_interval(days => $3))`,
      [eventId, status, stateDaysAgo],
    );
  }
}

const count = async (sql: string) => (await db.pool.query<{ n: number }>(`select count(*)::int as n from ${sql}`)).rows[0]?.n;

describe('the reaper', () => {
  it('deletes only rows past their horizon, in batches of the configured size', async () => {
    await seedKeys('expired-', 5, -1, 'completed');
    await seedKeys('expired-failed-', 1, -1, 'failed');
    await seedKeys('live-', 3, 1, 'completed');
    await seedKeys('expired-open-', 2, -1, 'pending');
    await seedOutbox('old-sent', 3, 31);
    await seedOutbox('young-sent', 2, 29);
    await seedOutbox('old-unsent', 1, null);
    await db.pool.query(`update outbox set created_at = now() - interval '60 days' where sent_at is null`);
    await seedInbox('receipts', 'old-', 5, 8);
    await seedInbox('receipts', 'young-', 2, 6);
    await seedWebhookEvent('evt_old', 8, false);
    await seedWebhookEvent('evt_latest', 8, true);
    await seedWebhookEvent('evt_young', 6, false);
    // A settled object unchanged past the horizon: its state goes, and its latest word with it.
    await seedWebhookEvent('evt_settled', 8, true, 'succeeded', 8);
    // A hold still waiting for its capture keeps its state (and its latest word), however old.
    await seedWebhookEvent('evt_held', 8, true, 'requires_capture', 8);

    // The pool as the reaper sees it, counting what each delete statement deleted.
    const statements: number[] = [];
    const query = db.pool.query.bind(db.pool) as (...args: unknown[]) => Promise<QueryResult>;
    const counting = new Proxy(db.pool, {
      get(target, property, receiver) {
        if (property !== 'query') return Reflect.get(target, property, receiver) as unknown;
        return async (...args: unknown[]) => {
          const result = await query(...args);
          if (result.command === 'DELETE') statements.push(result.rowCount ?? 0);
          return result;
        };
      },
    });
    const report = await reapExpired(counting, HORIZONS);

    expect(report).toEqual({
      deleted: { activity_idempotency: 6, outbox: 3, stripe_object_states: 1, stripe_webhook_events: 2, processed_messages: 5 },
      expiredOpenKeys: 2,
      failures: [],
    });
    // Never more than a batch per statement; a short batch ends each table's sweep.
    expect(Math.max(...statements)).toBe(2);
    expect(statements).toEqual([2, 2, 2, 0, 2, 1, 1, 2, 0, 2, 2, 1]);

    expect(await count(`activity_idempotency where idempotency_key like 'live-%'`)).toBe(3);
    expect(await count(`activity_idempotency where state = 'pending'`)).toBe(2);
    expect(await count('activity_idempotency')).toBe(5);
    expect((await db.pool.query<{ order_id: string }>('select order_id from outbox order by order_id')).rows.map((row) => row.order_id)).toEqual([
      'old-unsent-1',
      'young-sent-1',
      'young-sent-2',
    ]);
    expect((await db.pool.query<{ event_id: string }>('select event_id from stripe_webhook_events order by 1')).rows.map((row) => row.event_id)).toEqual([
      'evt_held1',
      'evt_latest1',
      'evt_young1',
    ]);
    expect((await db.pool.query<{ object_id: string }>('select object_id from stripe_object_states order by 1')).rows.map((row) => row.object_id)).toEqual([
      'pi_evt_held',
      'pi_evt_latest',
    ]);
    // A webhook event's receipt goes with it and stays with it.
    expect(
      (await db.pool.query<{ message_id: string }>(`select message_id from processed_messages where subscriber_id = $1 order by 1`, [STRIPE_WEBHOOK_SUBSCRIBER])).rows.map(
        (row) => row.message_id,
      ),
    ).toEqual(['evt_held1', 'evt_latest1', 'evt_young1']);
    expect(await count(`processed_messages where subscriber_id = 'receipts'`)).toBe(2);

    // A second sweep finds nothing more.
    expect((await reapExpired(db.pool, HORIZONS)).deleted).toEqual({
      activity_idempotency: 0,
      outbox: 0,
      stripe_object_states: 0,
      stripe_webhook_events: 0,
      processed_messages: 0,
    });
  });

  it('passes over rows another transaction holds, instead of waiting for them', async () => {
    await seedKeys('held-', 1, -1, 'completed');
    await seedKeys('free-', 1, -1, 'completed');
    const holder = await db.pool.connect();
    try {
      await holder.query('begin');
      await holder.query(`select 1 from activity_idempotency where idempotency_key = 'held-1' for update`);
      const report = await reapExpired(db.pool, HORIZONS);
      expect(report.deleted.activity_idempotency).toBe(1);
      await holder.query('rollback');
    } finally {
      holder.release();
    }
    expect((await reapExpired(db.pool, HORIZONS)).deleted.activity_idempotency).toBe(1);
  });
});

describe('the retention settings', () => {
  it('documents its defaults and refuses, one line each, a horizon shorter than its floor', () => {
    expect(DEFAULT_RETENTION).toMatchObject({ activityKeyMs: 30 * DAY, outboxSentMs: 30 * DAY, inboxMs: 7 * DAY, operatorResetMs: 14 * DAY, batchSize: 1000 });
    const refused = (() => {
      try {
        loadRetentionSettings({ RETENTION_ACTIVITY_KEY_DAYS: '20', RETENTION_INBOX_DAYS: '2', RETENTION_OUTBOX_SENT_DAYS: '30' });
      } catch (error) {
        return error;
      }
      return null;
    })();
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).problems).toEqual([
      'RETENTION_ACTIVITY_KEY_DAYS: 20 days is shorter than its floor of 28 days (settlement (14 days) + RETENTION_OPERATOR_RESET_DAYS (14 days)); raise it',
      "RETENTION_INBOX_DAYS: 2 days is shorter than its floor of 3 days (Stripe's 3 days of webhook redelivery); raise it",
    ]);
    // A longer reset window raises the key floors with it.
    expect(() => loadRetentionSettings({ RETENTION_OPERATOR_RESET_DAYS: '30' })).toThrow(/RETENTION_ACTIVITY_KEY_DAYS: 30 days is shorter than its floor of 44 days/);
  });
});

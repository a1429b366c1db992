// The consumers' inbox (processed_messages): claims a message ID per subscriber inside the
// handler's transaction so a redelivery applies nothing, and reaps receipts past their horizon.
import type { PoolClient } from 'pg';
import { deleteInBatches } from '../platform/db/batches.js';
import type { Queryable } from '../platform/db/queryable.js';

/**
 * Records that `subscriberId` handled `messageId`, inside the caller's transaction. True the
 * first time; false when the message was already handled (a redelivery, a republish), in which
 * case the caller applies nothing. A second handler racing on the same message waits on the
 * primary key until the first commits, then gets false.
 */
export async function claimInboxMessage(client: PoolClient, subscriberId: string, messageId: string): Promise<boolean> {
  const { rowCount } = await client.query(
    `insert into processed_messages (subscriber_id, message_id) values ($1, $2)
     on conflict (subscriber_id, message_id) do nothing`,
    [subscriberId, messageId],
  );
  return rowCount === 1;
}

/**
 * Deletes inbox receipts older than `olderThanMs`, in batches of `batchSize`, each its own
 * statement. A redelivery older than the horizon would be handled again, so the horizon is longer
 * than any redelivery (src/operations/retention/settings.ts). Subscribers whose receipts go with a record of
 * their own (Stripe's webhooks: src/messaging/webhooks/record-stripe-event.ts) are named in `except`.
 */
export async function reapInboxMessages(
  db: Queryable,
  olderThanMs: number,
  batchSize: number,
  except: readonly string[] = [],
): Promise<number> {
  return deleteInBatches(
    db,
    `delete from processed_messages where ctid in (
       select ctid from processed_messages
        where processed_at <= now() - make_interval(secs => $2::double precision / 1000)
          and subscriber_id <> all($3::text[])
        limit $1 for update skip locked)`,
    [olderThanMs, except],
    batchSize,
  );
}

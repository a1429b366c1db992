import type { PoolClient } from 'pg';

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

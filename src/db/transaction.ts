import type { Pool, PoolClient } from 'pg';

/**
 * Runs `work` in one transaction on one connection: every multi-statement write in this
 * project goes through here, so it commits whole or not at all.
 */
export async function withTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let brokenConnection: Error | undefined;
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    // A connection that cannot even roll back is broken: hand it back destroyed, not pooled.
    await client.query('rollback').catch((rollbackError: unknown) => {
      brokenConnection = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    });
    throw error;
  } finally {
    client.release(brokenConnection);
  }
}

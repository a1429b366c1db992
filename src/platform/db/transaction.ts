// Runs a unit of work in one transaction on one connection, rolling back on error and destroying
// a connection whose backend died.
import type { Pool, PoolClient } from 'pg';

/**
 * Runs `work` in one transaction on one connection: every multi-statement write in this
 * project goes through here, so it commits whole or not at all.
 */
export async function withTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let brokenConnection: Error | undefined;
  // A backend that dies while this client is checked out and between statements (a failover,
  // pg_terminate_backend) is reported as an 'error' event, not through a query; unheard, it would
  // end the process. Heard, it fails the next statement, and the client is destroyed on release.
  const onConnectionError = (error: Error) => {
    brokenConnection ??= error;
  };
  client.on('error', onConnectionError);
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
    client.removeListener('error', onConnectionError);
    client.release(brokenConnection);
  }
}

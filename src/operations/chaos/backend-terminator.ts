// Chaos fault: terminates one of the workers' PostgreSQL backends in the run's database, as a
// failover or an operator's pg_terminate_backend would.
import type { Pool } from 'pg';

/**
 * Terminates one of the workers' PostgreSQL backends, as a failover or an operator's
 * pg_terminate_backend would: only backends of this run's database, only the workers' pools
 * (by application name), never the run's own connection. Returns whether one was terminated.
 */
export async function terminateOneWorkerBackend(db: Pool, database: string, random: () => number): Promise<boolean> {
  const { rows } = await db.query<{ pid: number }>(
    `select pid from pg_stat_activity
      where datname = $1 and application_name = 'order-payments-worker' and pid <> pg_backend_pid()
      order by pid`,
    [database],
  );
  const victim = rows[Math.floor(random() * rows.length)];
  if (!victim) return false;
  const { rows: result } = await db.query<{ terminated: boolean }>(
    `select pg_terminate_backend(pid) as terminated from pg_stat_activity where pid = $1 and datname = $2`,
    [victim.pid, database],
  );
  return result[0]?.terminated === true;
}

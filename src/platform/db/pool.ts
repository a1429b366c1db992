// Creates the PostgreSQL pool every process uses: bigint amounts as numbers, a named
// application, and dead backends that fail the next statement instead of crashing the process.
import pg from 'pg';
import { preparedStatementsEnabled, prepareRepeatedStatements } from './prepared-statements.js';

// bigint columns (amounts in minor units) come back as numbers: every amount this project
// stores is at most Stripe's 99 999 999, far inside Number's exact range.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export interface PoolOptions {
  connectionString: string;
  /** Connections kept open. Default 10: one per concurrent activity slot is plenty. */
  max?: number;
  /** Name shown in pg_stat_activity, so operators can tell workers from tools. */
  applicationName?: string;
  /**
   * Statements with parameters run as named prepared statements, parsed and planned once per
   * connection (prepared-statements.ts). Default: env DATABASE_PREPARED_STATEMENTS (on unless
   * `off`); false sends each unnamed, as pg does alone.
   */
  prepareStatements?: boolean;
}

export function createPool(options: PoolOptions): pg.Pool {
  const prepareStatements = options.prepareStatements ?? preparedStatementsEnabled();
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'order-payments',
    // A backend terminated under us (failover, pg_terminate_backend) must not crash the
    // process: the pool drops the client and the activity retry reconnects.
    idleTimeoutMillis: 30_000,
  });
  pool.on('error', () => undefined);
  // The same holds for a client that is checked out: its backend's death arrives as an 'error'
  // event whenever no statement is running, and pg-pool listens only while the client is idle.
  // Heard here, it cannot end the process; the client's next statement fails instead.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    if (prepareStatements) prepareRepeatedStatements(client);
  });
  return pool;
}

// The type for code that runs on either the pool or a client inside a transaction.
import type { Pool, PoolClient } from 'pg';

/** Either the pool (one statement, autocommit) or a client inside `withTransaction`. */
export type Queryable = Pool | PoolClient;

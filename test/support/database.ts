// Test support: a fresh, migrated PostgreSQL database for one test file, dropped afterwards, with a
// login of its own for each service's role (migration 017).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate } from '../../src/platform/db/migrate.js';
import { createPool } from '../../src/platform/db/pool.js';
import { ensureServiceLogin, SERVICES, urlAs, type Service } from '../../src/platform/db/service-roles.js';

/** The server every test database is created on. Default: the local trust-auth server. */
export const ADMIN_DATABASE_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  /** The database as its admin (the superuser that created it): for setup and for assertions. */
  url: string;
  pool: pg.Pool;
  /** The database as `service`'s own login, a member of its role and nothing else: what that service runs with. */
  serviceUrl(service: Service): string;
  /** A pool of `service`'s login, closed by drop(). */
  servicePool(service: Service): pg.Pool;
  drop(): Promise<void>;
}

/**
 * A fresh, migrated database of its own for one test file; dropped afterwards, with its logins.
 * Roles are the cluster's, so each database gets logins named after it (`<database>_<service>`),
 * with random passwords: parallel files and runs never share one.
 */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const name = `payments_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  const pool = createPool({ connectionString: url.toString(), max: 20, applicationName: 'order-payments-test' });
  const serviceUrls = new Map<Service, string>();
  const servicePools = new Map<Service, pg.Pool>();
  if (options.migrated ?? true) {
    await migrate(pool);
    for (const service of SERVICES) {
      const login = `${name}_${service}`;
      serviceUrls.set(service, urlAs(url.toString(), login, await ensureServiceLogin(pool, login, service)));
    }
  }
  const serviceUrl = (service: Service): string => {
    const found = serviceUrls.get(service);
    if (!found) throw new Error(`the test database ${name} was created unmigrated: it has no service logins`);
    return found;
  };
  return {
    url: url.toString(),
    pool,
    serviceUrl,
    servicePool(service) {
      let found = servicePools.get(service);
      if (!found) {
        found = createPool({ connectionString: serviceUrl(service), max: 10, applicationName: `order-payments-test-${service}` });
        servicePools.set(service, found);
      }
      return found;
    },
    async drop() {
      await Promise.all([...servicePools.values()].map((servicePool) => servicePool.end()));
      await pool.end();
      const cleanup = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
      await cleanup.connect();
      await cleanup.query(`drop database if exists ${name} with (force)`);
      for (const service of serviceUrls.keys()) await cleanup.query(`drop role if exists ${name}_${service}`);
      await cleanup.end();
    },
  };
}

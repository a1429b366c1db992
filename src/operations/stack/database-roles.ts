// The stack's database logins: one per service, each a member of its service's role (migration
// 017) and nothing else, with a fresh random password every time the stack starts.
import type { Queryable } from '../../platform/db/queryable.js';
import { ensureServiceLogin, SERVICES, urlAs, type Service } from '../../platform/db/service-roles.js';

export type ServiceUrls = Record<Service, string>;

/** `order_payments` -> `order_payments_worker_login`: unquoted identifiers PostgreSQL keeps as they are. */
function loginName(databaseUrl: string, service: Service): string {
  const database = decodeURIComponent(new URL(databaseUrl).pathname.slice(1)).toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 40) || 'order_payments';
  return `${/^[a-z_]/.test(database) ? database : `db_${database}`}_${service}_login`;
}

/**
 * The URL each service connects with: its own login on `databaseUrl`'s database, created (or its
 * password replaced) through `admin`. The passwords live only in the services' environments, so a
 * restart draws new ones. When `admin` may not create roles (a DATABASE_URL of a plain user), every
 * service gets `databaseUrl` itself, and `say` tells the operator so.
 */
export async function serviceLogins(admin: Queryable, databaseUrl: string, say: (line: string) => void): Promise<ServiceUrls> {
  const { rows } = await admin.query<{ may: boolean }>('select rolsuper or rolcreaterole as may from pg_roles where rolname = current_user');
  if (!rows[0]?.may) {
    say('the database user may not create roles: every service connects as it (give each its own login: docs/security.md)');
    return Object.fromEntries(SERVICES.map((service) => [service, databaseUrl])) as ServiceUrls;
  }
  const urls: Partial<ServiceUrls> = {};
  for (const service of SERVICES) {
    const login = loginName(databaseUrl, service);
    urls[service] = urlAs(databaseUrl, login, await ensureServiceLogin(admin, login, service));
  }
  return urls as ServiceUrls;
}

// The database roles of migration 017: one group role per service, each granted only what that
// service's code runs, and the login users that act as them.
import { randomBytes } from 'node:crypto';
import type { Queryable } from './queryable.js';

/** The services that connect to PostgreSQL, each as a role of its own (migration 017). */
export const SERVICE_ROLES = {
  worker: 'order_payments_worker',
  api: 'order_payments_api',
  outbox: 'order_payments_outbox',
  receipts: 'order_payments_receipts',
} as const;

export type Service = keyof typeof SERVICE_ROLES;

export const SERVICES = Object.keys(SERVICE_ROLES) as Service[];

/** A login user name PostgreSQL accepts unquoted: lower-case letters, digits and '_', at most 63. */
const LOGIN_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Creates (or, when it exists, resets the password of) a login user that is a member of the
 * service's role and nothing else, and returns its password: a random 192-bit secret. Needs a
 * connection allowed to create roles (the cluster's superuser, or a CREATEROLE admin).
 */
export async function ensureServiceLogin(admin: Queryable, login: string, service: Service): Promise<string> {
  if (!LOGIN_NAME.test(login)) throw new Error(`'${login}' is not a login name this project creates (lower-case letters, digits and _)`);
  const password = randomBytes(24).toString('base64url');
  const { rows } = await admin.query<{ exists: boolean }>('select exists (select 1 from pg_roles where rolname = $1) as exists', [login]);
  // Identifiers cannot be bound parameters; both are checked above, and the password is base64url.
  const verb = rows[0]?.exists ? 'alter' : 'create';
  await admin.query(`${verb} role ${login} login inherit nosuperuser nocreatedb nocreaterole password '${password}'`);
  await admin.query(`grant ${SERVICE_ROLES[service]} to ${login}`);
  return password;
}

/** `url` with another user and password (and the same server and database). */
export function urlAs(url: string, user: string, password: string): string {
  const parsed = new URL(url);
  parsed.username = user;
  parsed.password = password;
  return parsed.toString();
}

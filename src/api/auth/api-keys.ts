import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '../../db/queryable.js';

/** Tenant IDs follow the same shape as the other identifiers in this project. */
export const TENANT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

const KEY_PREFIX = 'opk_';

export class InvalidTenantIdError extends Error {
  override readonly name = 'InvalidTenantIdError';
  constructor(readonly tenantId: string) {
    super(`tenant ID '${tenantId}' must be 1-64 characters of letters, digits, '-' or '_', starting with a letter or digit (e.g. acme-shop)`);
  }
}

/**
 * SHA-256, not bcrypt: the key is 256 random bits, so there is nothing for a slow hash to
 * protect against (no dictionary, no reuse across sites), while every request pays for the
 * hash; and a deterministic hash lets the lookup be one primary-key probe.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Creates a key for the tenant, stores only its hash, and returns the key: the one time it exists in clear. */
export async function createApiKey(db: Queryable, tenantId: string): Promise<{ key: string; prefix: string }> {
  if (!TENANT_ID_PATTERN.test(tenantId)) throw new InvalidTenantIdError(tenantId);
  const key = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  const prefix = key.slice(0, KEY_PREFIX.length + 6);
  await db.query('insert into api_keys (key_hash, tenant_id, key_prefix) values ($1, $2, $3)', [hashApiKey(key), tenantId, prefix]);
  return { key, prefix };
}

/** The tenant a presented key belongs to, or null for an unknown key. */
export async function tenantForApiKey(db: Queryable, key: string): Promise<string | null> {
  const { rows } = await db.query<{ tenant_id: string }>('select tenant_id from api_keys where key_hash = $1', [hashApiKey(key)]);
  return rows[0]?.tenant_id ?? null;
}

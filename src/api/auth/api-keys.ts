// Tenants' API keys in the api_keys table (migrations 007, 009 and 017): create (only the hash is
// stored) with scopes and an optional expiry, look up, list and revoke.
import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '../../platform/db/queryable.js';
import { isUniqueViolation } from '../../platform/db/unique-violation.js';

/** Tenant IDs follow the same shape as the other identifiers in this project. */
export const TENANT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

const KEY_PREFIX = 'opk_';
/** What `keys list` shows and `keys revoke --prefix` takes: `opk_` and the key's next 6 characters. */
export const API_KEY_PREFIX_PATTERN = /^opk_[A-Za-z0-9_-]{6}$/;

/** What a key may do (migrations 017 and 022): each orders API route needs one of these. */
export const API_KEY_SCOPES = ['orders:write', 'refunds:write', 'disputes:write', 'read'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** A `--scopes` list that names a scope there is not. */
export class InvalidScopeError extends Error {
  override readonly name = 'InvalidScopeError';
  constructor(readonly given: string) {
    super(`'${given}' is not a list of API key scopes: give one or more of ${API_KEY_SCOPES.join(', ')}, separated by commas (e.g. orders:write,read)`);
  }
}

/** Parses `orders:write,read` (any order, duplicates ignored), refusing an unknown or empty list. */
export function parseScopes(text: string): ApiKeyScope[] {
  const named = text.split(',').map((scope) => scope.trim()).filter(Boolean);
  if (named.length === 0 || !named.every((scope): scope is ApiKeyScope => (API_KEY_SCOPES as readonly string[]).includes(scope))) throw new InvalidScopeError(text);
  return API_KEY_SCOPES.filter((scope) => named.includes(scope));
}

/** Drawing a prefix that is taken twice in a row means something other than chance is wrong. */
const CREATE_ATTEMPTS = 3;

export class InvalidTenantIdError extends Error {
  override readonly name = 'InvalidTenantIdError';
  constructor(readonly tenantId: string) {
    super(`tenant ID '${tenantId}' must be 1-64 characters of letters, digits, '-' or '_', starting with a letter or digit (e.g. acme-shop)`);
  }
}

/** `keys revoke` named a prefix that is malformed or belongs to no key. */
export class UnknownApiKeyPrefixError extends Error {
  override readonly name = 'UnknownApiKeyPrefixError';
  constructor(readonly prefix: string) {
    super(
      API_KEY_PREFIX_PATTERN.test(prefix)
        ? `no API key has the prefix '${prefix}' (list a tenant's keys with: npm run api -- keys list --tenant <id>)`
        : `'${prefix}' is not an API key prefix: it looks like opk_ and 6 more characters, as keys list shows it`,
    );
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

function isPrefixTaken(error: unknown): boolean {
  return isUniqueViolation(error, 'api_keys_key_prefix_key');
}

export interface NewApiKeyOptions {
  /** What the key may do. Default every scope. */
  scopes?: readonly ApiKeyScope[];
  /** When it stops working; null (the default) = until revoked. */
  expiresAt?: Date | null;
}

/** Creates a key for the tenant, stores only its hash, and returns the key: the one time it exists in clear. */
export async function createApiKey(db: Queryable, tenantId: string, options: NewApiKeyOptions = {}): Promise<{ key: string; prefix: string }> {
  if (!TENANT_ID_PATTERN.test(tenantId)) throw new InvalidTenantIdError(tenantId);
  const scopes = options.scopes ?? API_KEY_SCOPES;
  for (let attempt = 1; ; attempt++) {
    const key = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
    const prefix = key.slice(0, KEY_PREFIX.length + 6);
    try {
      await db.query('insert into api_keys (key_hash, tenant_id, key_prefix, scopes, expires_at) values ($1, $2, $3, $4, $5)', [
        hashApiKey(key),
        tenantId,
        prefix,
        scopes,
        options.expiresAt ?? null,
      ]);
      return { key, prefix };
    } catch (error) {
      // The prefix names one key (revoke takes it), so a prefix already taken means: draw again.
      if (!isPrefixTaken(error) || attempt >= CREATE_ATTEMPTS) throw error;
    }
  }
}

/** What the bearer check learns from a presented key. */
export type ApiKeyLookup =
  | { status: 'active'; tenantId: string; scopes: ApiKeyScope[] }
  | { status: 'revoked'; prefix: string; revokedAt: Date }
  | { status: 'expired'; prefix: string; expiredAt: Date }
  | { status: 'unknown' };

/**
 * The tenant a presented key belongs to, and what it may do. Read from the table on every request
 * (no cache), so a revocation or an expiry takes effect on the very next request, in every API
 * process; the database's clock decides expiry, so every process agrees.
 */
export async function lookupApiKey(db: Queryable, key: string): Promise<ApiKeyLookup> {
  const { rows } = await db.query<{ tenant_id: string; key_prefix: string; revoked_at: Date | null; expires_at: Date | null; expired: boolean; scopes: ApiKeyScope[] }>(
    'select tenant_id, key_prefix, revoked_at, expires_at, expires_at <= now() as expired, scopes from api_keys where key_hash = $1',
    [hashApiKey(key)],
  );
  const row = rows[0];
  if (!row) return { status: 'unknown' };
  if (row.revoked_at) return { status: 'revoked', prefix: row.key_prefix, revokedAt: row.revoked_at };
  if (row.expired && row.expires_at) return { status: 'expired', prefix: row.key_prefix, expiredAt: row.expires_at };
  return { status: 'active', tenantId: row.tenant_id, scopes: row.scopes };
}

/** A key as an operator sees it: never the key itself, which is not stored. */
export interface ApiKeyListing {
  prefix: string;
  tenantId: string;
  scopes: ApiKeyScope[];
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/** A tenant's keys, oldest first, revoked ones included. */
export async function listApiKeys(db: Queryable, tenantId: string): Promise<ApiKeyListing[]> {
  if (!TENANT_ID_PATTERN.test(tenantId)) throw new InvalidTenantIdError(tenantId);
  const { rows } = await db.query<{ key_prefix: string; tenant_id: string; scopes: ApiKeyScope[]; created_at: Date; expires_at: Date | null; revoked_at: Date | null }>(
    'select key_prefix, tenant_id, scopes, created_at, expires_at, revoked_at from api_keys where tenant_id = $1 order by created_at, key_prefix',
    [tenantId],
  );
  return rows.map((row) => ({
    prefix: row.key_prefix,
    tenantId: row.tenant_id,
    scopes: row.scopes,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
  }));
}

/**
 * Revokes the key with this prefix. Idempotent: revoking a revoked key keeps its first
 * revocation time and reports `alreadyRevoked`. An unknown prefix throws UnknownApiKeyPrefixError.
 */
export async function revokeApiKey(
  db: Queryable,
  prefix: string,
): Promise<Pick<ApiKeyListing, 'prefix' | 'tenantId' | 'createdAt'> & { revokedAt: Date; alreadyRevoked: boolean }> {
  if (!API_KEY_PREFIX_PATTERN.test(prefix)) throw new UnknownApiKeyPrefixError(prefix);
  const { rows } = await db.query<{ key_prefix: string; tenant_id: string; created_at: Date; revoked_at: Date; already_revoked: boolean }>(
    `with target as (select key_hash, revoked_at is not null as already_revoked from api_keys where key_prefix = $1)
     update api_keys k set revoked_at = coalesce(k.revoked_at, now())
       from target where k.key_hash = target.key_hash
     returning k.key_prefix, k.tenant_id, k.created_at, k.revoked_at, target.already_revoked`,
    [prefix],
  );
  const row = rows[0];
  if (!row) throw new UnknownApiKeyPrefixError(prefix);
  return { prefix: row.key_prefix, tenantId: row.tenant_id, createdAt: row.created_at, revokedAt: row.revoked_at, alreadyRevoked: row.already_revoked };
}

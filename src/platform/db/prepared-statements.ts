// Every parameterized statement a pooled connection sends more than once is parsed and planned
// by the server once per connection, as a named prepared statement, instead of on every call.
import { createHash } from 'node:crypto';
import type { ClientBase } from 'pg';
import { ConfigError } from '../config/config-error.js';

/** Statements one connection keeps prepared; past this, further texts run unnamed as before. */
export const MAX_PREPARED_PER_CONNECTION = 256;

/**
 * A statement whose result columns come from `*` is left unnamed: after a migration adds a column,
 * the server refuses its prepared plan once on each connection that holds it ("cached plan must
 * not change result type") before re-planning it. `count(*)` is not such a statement.
 */
const STAR_COLUMNS = /(?:select|returning|,)\s*(?:\w+\.)?\*|\.\*/i;

/**
 * `DATABASE_PREPARED_STATEMENTS`: `on` (the default) or `off`. Off is for a PgBouncer in
 * transaction mode older than 1.21 (or without max_prepared_statements), where a statement
 * prepared on one server connection is not there on the next.
 */
export function preparedStatementsEnabled(env: Record<string, string | undefined> = process.env): boolean {
  const value = env.DATABASE_PREPARED_STATEMENTS?.trim().toLowerCase() ?? '';
  if (value === '' || value === 'on') return true;
  if (value === 'off') return false;
  throw new ConfigError([
    `DATABASE_PREPARED_STATEMENTS: must be on or off, got '${env.DATABASE_PREPARED_STATEMENTS ?? ''}' (off behind a PgBouncer in transaction mode older than 1.21)`,
  ]);
}

/** The name a statement text is prepared under: the same text, the same name, on every connection. */
export function preparedStatementName(text: string): string {
  return `op_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
}

/**
 * Wraps `client.query` so that a statement with parameters (`query(text, values)` or
 * `query({ text, values })`) runs as a named prepared statement. pg prepares a name on its first
 * use on a connection and only binds and executes it afterwards (it records the name only once
 * the server parsed it, so a statement that failed to parse is parsed again next time). Prepared
 * statements are the connection's, not the transaction's: a rollback keeps them. Statements
 * without parameters (begin, commit, DDL) keep pg's simple protocol.
 */
export function prepareRepeatedStatements(client: ClientBase): void {
  const names = new Map<string, string>();
  const nameOf = (text: string): string | undefined => {
    const known = names.get(text);
    if (known !== undefined) return known;
    if (names.size >= MAX_PREPARED_PER_CONNECTION || STAR_COLUMNS.test(text)) return undefined;
    const name = preparedStatementName(text);
    names.set(text, name);
    return name;
  };
  // Looked up on every call, not bound now: the pg instrumentation patches `Client.prototype.query`
  // when tracing starts, which may be after this connection opened.
  const prototype = Object.getPrototypeOf(client) as { query: (...args: unknown[]) => unknown };
  const query = (...args: unknown[]): unknown => prototype.query.apply(client, args);
  const named = (...args: unknown[]): unknown => {
    const [first, second, ...rest] = args;
    if (typeof first === 'string' && Array.isArray(second) && second.length > 0) {
      const name = nameOf(first);
      if (name !== undefined) return query({ name, text: first, values: second }, ...rest);
    } else if (isPlainConfig(first) && first.name === undefined && Array.isArray(first.values) && first.values.length > 0) {
      const name = nameOf(first.text);
      if (name !== undefined) return query({ ...first, name }, ...args.slice(1));
    }
    return query(...args);
  };
  Object.assign(client, { query: named });
}

/** A `{ text, values }` object, not a Query or Cursor instance (those submit themselves). */
function isPlainConfig(value: unknown): value is { text: string; values?: unknown; name?: string } {
  if (typeof value !== 'object' || value === null) return false;
  if (typeof (value as { submit?: unknown }).submit === 'function') return false;
  return typeof (value as { text?: unknown }).text === 'string';
}

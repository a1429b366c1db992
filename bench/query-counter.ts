// Counts the statements and transactions a pg pool sends, on the client, for the benchmark's
// per-replay cost figures.
import type pg from 'pg';

/** Round trips and transactions seen by one pool, counted on the client. */
export interface QueryCounts {
  /** Statements sent: each `query()` call is one round trip to the server. */
  roundTrips: number;
  /** Committed or rolled-back units of work: each begin…commit block, and each statement outside one. */
  transactions: number;
}

export interface QueryCounter {
  read(): QueryCounts;
  /** Starts recording each statement's text (whitespace collapsed); returns those recorded so far on stop. */
  record(): { stop(): string[] };
}

/**
 * Counts every statement a pool sends, by wrapping `query` on each connection as the pool opens
 * it (`pool.query` goes through the same connections). pg_stat_statements would count on the
 * server, but it needs `shared_preload_libraries`, which a stock server does not set.
 */
export function countQueries(pool: pg.Pool): QueryCounter {
  const counts: QueryCounts = { roundTrips: 0, transactions: 0 };
  let recording: string[] | null = null;
  pool.on('connect', (client) => {
    let inTransaction = false;
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    const counted = (...args: unknown[]): unknown => {
      counts.roundTrips += 1;
      const text = textOf(args[0]);
      recording?.push(text.replace(/\s+/g, ' ').trim());
      const statement = (text.trimStart().split(/\s/, 1)[0] ?? '').toLowerCase();
      if (statement === 'begin') inTransaction = true;
      else if (statement === 'commit' || statement === 'rollback') {
        if (inTransaction) counts.transactions += 1;
        inTransaction = false;
      } else if (!inTransaction) counts.transactions += 1;
      return query(...args);
    };
    Object.assign(client, { query: counted });
  });
  return {
    read: () => ({ ...counts }),
    record() {
      const statements: string[] = [];
      recording = statements;
      return {
        stop() {
          recording = null;
          return statements;
        },
      };
    },
  };
}

function textOf(query: unknown): string {
  if (typeof query === 'string') return query;
  const text = (query as { text?: unknown } | null)?.text;
  return typeof text === 'string' ? text : '';
}

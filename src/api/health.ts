// The API's health check: `GET /healthz`, which says whether the database answers, from a check
// made at most once a second however often it is asked.
import type { FastifyPluginAsync } from 'fastify';
import type { Pool } from 'pg';
import { z } from 'zod';

/** How long one database check answers every /healthz after it. */
export const HEALTH_CHECK_TTL_MS = 1_000;

interface Check {
  ok: boolean;
  /** When this check's answer stops being served (its query finished, plus the TTL). */
  freshUntil: number;
}

/**
 * `GET /healthz`: 200 when the service can reach its database, 503 when it cannot. /healthz needs
 * no credentials, so it must not be a way to make the database work: one `select 1` answers every
 * request for a second, and requests that arrive while it runs wait for that same query (one in
 * flight at most). A thousand probes a second cost one query a second.
 */
export const healthRoutes: FastifyPluginAsync<{ db: Pool; ttlMs?: number }> = (app, { db, ttlMs = HEALTH_CHECK_TTL_MS }) => {
  const status = z.looseObject({ status: z.string(), reason: z.string().optional() });
  const schema = { summary: 'Liveness with the database (checked at most once a second)', tags: ['health'], response: { 200: status, 503: status } };
  let last: Check | null = null;
  let running: Promise<Check> | null = null;
  const check = (): Promise<Check> => {
    if (last !== null && Date.now() < last.freshUntil) return Promise.resolve(last);
    running ??= db
      .query('select 1')
      .then(
        () => true,
        (error: unknown) => {
          app.log.warn({ err: error }, 'health check: database unreachable');
          return false;
        },
      )
      .then((ok) => {
        last = { ok, freshUntil: Date.now() + ttlMs };
        running = null;
        return last;
      });
    return running;
  };
  app.get('/healthz', { schema }, async (_request, reply) => {
    const { ok } = await check();
    if (ok) return { status: 'ok' };
    return reply.code(503).send({ status: 'unavailable', reason: 'database unreachable' });
  });
  return Promise.resolve();
};

// The API's health check: `GET /healthz`, which says whether the database answers.
import type { FastifyPluginAsync } from 'fastify';
import type { Pool } from 'pg';
import { z } from 'zod';

/** `GET /healthz`: 200 when the service can reach its database, 503 when it cannot. */
export const healthRoutes: FastifyPluginAsync<{ db: Pool }> = (app, { db }) => {
  const status = z.looseObject({ status: z.string(), reason: z.string().optional() });
  const schema = { summary: 'Liveness with the database', tags: ['health'], response: { 200: status, 503: status } };
  app.get('/healthz', { schema }, async (request, reply) => {
    try {
      await db.query('select 1');
      return { status: 'ok' };
    } catch (error) {
      request.log.warn({ err: error }, 'health check: database unreachable');
      return reply.code(503).send({ status: 'unavailable', reason: 'database unreachable' });
    }
  });
  return Promise.resolve();
};

// Bearer authentication for the orders API: an onRequest hook that refuses a missing, unknown or
// revoked API key with 401 and sets the request's tenant.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Pool } from 'pg';
import { lookupApiKey } from './api-keys.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the bearer-auth hook on every authenticated route. */
    tenantId?: string;
  }
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * An onRequest hook: runs before the body is read, so an unauthenticated caller is refused
 * with 401 before anything of theirs is parsed or stored.
 */
export function bearerAuth(db: Pool) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const header = request.headers.authorization;
    const match = header ? BEARER.exec(header) : null;
    const key = match?.[1];
    if (!key) {
      await reply
        .code(401)
        .header('www-authenticate', 'Bearer')
        .send({ error: 'unauthorized', message: 'send your API key as "Authorization: Bearer <key>" (create one with: npm run api -- keys create --tenant <id>)' });
      return;
    }
    // Looked up on every request, never cached: a revoked key is refused on its next request.
    const found = await lookupApiKey(db, key);
    if (found.status === 'revoked') {
      await reply
        .code(401)
        .header('www-authenticate', 'Bearer error="invalid_token", error_description="the API key was revoked"')
        .send({
          error: 'api_key_revoked',
          message: `the API key ${found.prefix}… was revoked at ${found.revokedAt.toISOString()}; use another key of this tenant (create one with: npm run api -- keys create --tenant <id>)`,
        });
      return;
    }
    if (found.status === 'unknown') {
      await reply.code(401).header('www-authenticate', 'Bearer error="invalid_token"').send({ error: 'unauthorized', message: 'the API key is not recognised' });
      return;
    }
    request.tenantId = found.tenantId;
  };
}

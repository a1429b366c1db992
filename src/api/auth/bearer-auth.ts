import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Pool } from 'pg';
import { tenantForApiKey } from './api-keys.js';

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
    const tenantId = await tenantForApiKey(db, key);
    if (!tenantId) {
      await reply.code(401).header('www-authenticate', 'Bearer error="invalid_token"').send({ error: 'unauthorized', message: 'the API key is not recognised' });
      return;
    }
    request.tenantId = tenantId;
  };
}

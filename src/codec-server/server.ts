// The codec server (Temporal's remote codec protocol) for the Web UI and the CLI: POST /encode and
// POST /decode take `{ payloads: [{ metadata: { key: base64 }, data: base64 }] }` and answer the
// same shape, run through the payload codec. Every request is authorized first; browsers may call
// it only from the configured Web UI origins; each decode is logged with who asked and for which
// namespace, never with a payload; refusals say what was wrong and never echo the body.
import cors from '@fastify/cors';
import type { Payload, PayloadCodec } from '@temporalio/common';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type onRequestHookHandler } from 'fastify';
import type { Logger } from 'pino';
import { z } from 'zod';
import { PayloadDecryptionError } from '../platform/temporal/payload-encryption/encryption-codec.js';
import { UnknownPayloadKeyError } from '../platform/temporal/payload-encryption/key-provider.js';
import { bearerToken, type Authenticate, type Caller } from './caller-auth.js';

export interface CodecServerOptions {
  codec: PayloadCodec;
  authenticate: Authenticate;
  corsOrigins: string[];
  bodyLimitBytes: number;
  logger: Logger;
  /**
   * Development only (the static token): also serve /ui/<token>/encode and /decode, for a Web UI
   * that cannot send a header (the dev server's --ui-codec-endpoint passes no token).
   */
  tokenInPath?: boolean;
}

const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');
const bodySchema = z.object({
  payloads: z.array(z.object({ metadata: z.record(z.string(), base64).optional(), data: base64.optional() })).max(10_000),
});
type PayloadJson = z.infer<typeof bodySchema>['payloads'][number];

const fromJson = (payload: PayloadJson): Payload => ({
  metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')])),
  data: Buffer.from(payload.data ?? '', 'base64'),
});
const toJson = (payload: Payload) => ({
  metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')])),
  data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
});

/** X-Namespace as the Web UI and the CLI send it, kept only if it looks like a namespace. */
const namespaceOf = (request: FastifyRequest): string => {
  const header = request.headers['x-namespace'];
  const value = Array.isArray(header) ? header[0] : header;
  return value && /^[\w.-]{1,200}$/.test(value) ? value : '(none)';
};

const refuse = (reply: FastifyReply, status: number, error: string, message: string) => reply.code(status).send({ error, message });

/** Who each authorized request came from, for the audit line. */
const callers = new WeakMap<FastifyRequest, Caller>();

export async function buildCodecServer(options: CodecServerOptions): Promise<FastifyInstance> {
  const { logger } = options;
  const app = Fastify({ logger: false, bodyLimit: options.bodyLimitBytes });
  const allowed = new Set(options.corsOrigins);
  // JSON only: anything else is 415.
  app.removeContentTypeParser('text/plain');

  // Before CORS: a browser on any other origin is refused outright, not merely left without headers.
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin !== undefined && !allowed.has(origin)) {
      logger.warn({ origin, namespace: namespaceOf(request) }, 'codec request refused: origin not allowed');
      return refuse(reply, 403, 'origin_not_allowed', 'this origin may not call the codec server (CODEC_SERVER_CORS_ORIGINS)');
    }
  });
  await app.register(cors, {
    origin: [...allowed],
    methods: ['POST', 'GET'],
    allowedHeaders: ['authorization', 'content-type', 'x-namespace'],
    credentials: true,
    maxAge: 600,
  });

  // Every failure answers with what was wrong in general terms: a parser's message could quote the body.
  app.setErrorHandler((error: FastifyError, _request, reply) => {
    const status = error.statusCode ?? 500;
    if (status === 413) return refuse(reply, 413, 'body_too_large', `request bodies are limited to ${options.bodyLimitBytes} bytes (CODEC_SERVER_BODY_LIMIT_BYTES)`);
    if (status === 415) return refuse(reply, 415, 'unsupported_media_type', 'send Content-Type: application/json');
    if (status >= 400 && status < 500) return refuse(reply, 400, 'malformed_body', 'the body must be JSON: {"payloads": [{"metadata": {...base64}, "data": "base64"}]}');
    logger.error({ status }, 'codec request failed');
    return refuse(reply, 500, 'internal_error', 'the codec server could not answer');
  });

  const authorize = async (request: FastifyRequest, reply: FastifyReply, token: string | null) => {
    const namespace = namespaceOf(request);
    if (token === null) {
      logger.warn({ namespace, reason: 'no bearer token' }, 'codec request refused');
      return refuse(reply, 401, 'unauthorized', 'send Authorization: Bearer <token>');
    }
    const caller = await options.authenticate(token);
    if (!caller) {
      logger.warn({ namespace, reason: 'token not accepted' }, 'codec request refused');
      return refuse(reply, 401, 'unauthorized', 'the bearer token was not accepted');
    }
    callers.set(request, caller);
  };

  const authorizeWith = (tokenOf: (request: FastifyRequest) => string | null): onRequestHookHandler =>
    async function authorized(request: FastifyRequest, reply: FastifyReply) {
      return authorize(request, reply, tokenOf(request));
    };

  const handle = (direction: 'encode' | 'decode') => async (request: FastifyRequest, reply: FastifyReply) => {
    const parsed = bodySchema.safeParse(request.body);
    if (!parsed.success) return refuse(reply, 400, 'malformed_body', `the body must be {"payloads": [...]}: ${parsed.error.issues[0]?.path.join('.') ?? 'body'} ${parsed.error.issues[0]?.message ?? ''}`.trim());
    const audit = { subject: callers.get(request)?.subject, namespace: namespaceOf(request), payloads: parsed.data.payloads.length };
    try {
      const payloads = await options.codec[direction](parsed.data.payloads.map(fromJson));
      logger.info(audit, direction === 'decode' ? 'decoded payloads' : 'encoded payloads');
      return { payloads: payloads.map(toJson) };
    } catch (error) {
      if (error instanceof PayloadDecryptionError || error instanceof UnknownPayloadKeyError) {
        logger.warn({ ...audit, keyId: error.keyId }, 'payloads not decoded');
        return refuse(reply, 400, 'payload_not_decrypted', error.message);
      }
      throw error;
    }
  };

  app.get('/health', () => ({ status: 'ok' }));
  for (const direction of ['encode', 'decode'] as const) {
    app.post(`/${direction}`, { onRequest: authorizeWith((request) => bearerToken(request.headers.authorization)) }, handle(direction));
    if (options.tokenInPath) {
      app.post(`/ui/:token/${direction}`, { onRequest: authorizeWith((request) => (request.params as { token: string }).token) }, handle(direction));
    }
  }
  return app;
}

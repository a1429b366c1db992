// The codec server's settings: where it listens, which Web UI origins may call it from a browser,
// how callers prove who they are (a static bearer token in development; the Web UI's access
// token, a JWT checked against the identity provider's JWKS, in production), and its body limit.
import { z } from 'zod';
import { ConfigError } from '../platform/config/config-error.js';

type Env = Record<string, string | undefined>;

export type CodecServerAuth =
  | { kind: 'static-token'; token: string }
  | { kind: 'jwt'; jwksUrl: string; issuer: string; audience: string };

export interface CodecServerSettings {
  port: number;
  host: string;
  /** Origins a browser may call from (the Web UI's); requests from any other origin get 403. */
  corsOrigins: string[];
  auth: CodecServerAuth;
  bodyLimitBytes: number;
}

const DEV_ORIGINS = 'http://localhost:8233,http://127.0.0.1:8233';

const schema = z.object({
  CODEC_SERVER_PORT: z.coerce.number({ error: 'must be a port number such as 8888' }).int().min(0).max(65_535, 'must be between 0 and 65535').default(8888),
  CODEC_SERVER_HOST: z.string().min(1).default('127.0.0.1'),
  CODEC_SERVER_CORS_ORIGINS: z
    .string()
    .regex(/^https?:\/\/[^\s,/]+(,https?:\/\/[^\s,/]+)*$/, 'must be comma-separated origins such as https://temporal-ui.example.com (scheme, host and port, no path)')
    .optional(),
  /** Development: the one token every caller sends as `Authorization: Bearer <token>`. */
  CODEC_SERVER_TOKEN: z.string().regex(/^[A-Za-z0-9._~-]{24,}$/, 'must be at least 24 URL-safe characters, e.g. $(openssl rand -hex 24)').optional(),
  /** Production: the identity provider's JWKS, and the issuer and audience the Web UI's access tokens carry. */
  CODEC_SERVER_JWKS_URL: z.url('must be a URL such as https://login.example.com/.well-known/jwks.json').optional(),
  CODEC_SERVER_JWT_ISSUER: z.string().min(1).optional(),
  CODEC_SERVER_JWT_AUDIENCE: z.string().min(1).optional(),
  CODEC_SERVER_BODY_LIMIT_BYTES: z.coerce.number().int().min(1_024, 'must be at least 1024').max(64 * 1024 * 1024, 'must be at most 67108864 (64 MiB)').default(4 * 1024 * 1024),
});

export function loadCodecServerSettings(env: Env = process.env): CodecServerSettings {
  const parsed = schema.safeParse(Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== '')));
  if (!parsed.success) throw ConfigError.fromZod(parsed.error);
  const data = parsed.data;
  const production = env.NODE_ENV === 'production';
  let auth: CodecServerAuth;
  if (data.CODEC_SERVER_JWKS_URL) {
    if (!data.CODEC_SERVER_JWT_ISSUER || !data.CODEC_SERVER_JWT_AUDIENCE) {
      throw new ConfigError(['CODEC_SERVER_JWT_ISSUER and CODEC_SERVER_JWT_AUDIENCE: are required with CODEC_SERVER_JWKS_URL (the iss and aud the access tokens carry)']);
    }
    auth = { kind: 'jwt', jwksUrl: data.CODEC_SERVER_JWKS_URL, issuer: data.CODEC_SERVER_JWT_ISSUER, audience: data.CODEC_SERVER_JWT_AUDIENCE };
  } else if (data.CODEC_SERVER_TOKEN) {
    if (production) throw new ConfigError(['CODEC_SERVER_TOKEN: a development-only setting, refused with NODE_ENV=production: set CODEC_SERVER_JWKS_URL, CODEC_SERVER_JWT_ISSUER and CODEC_SERVER_JWT_AUDIENCE (docs/encryption.md)']);
    auth = { kind: 'static-token', token: data.CODEC_SERVER_TOKEN };
  } else {
    throw new ConfigError([
      production
        ? 'CODEC_SERVER_JWKS_URL: is required with NODE_ENV=production, with CODEC_SERVER_JWT_ISSUER and CODEC_SERVER_JWT_AUDIENCE (docs/encryption.md)'
        : 'CODEC_SERVER_TOKEN: is required (every request must carry it as a bearer token): set CODEC_SERVER_TOKEN=$(openssl rand -hex 24), or CODEC_SERVER_JWKS_URL for access tokens',
    ]);
  }
  const origins = data.CODEC_SERVER_CORS_ORIGINS ?? (production ? undefined : DEV_ORIGINS);
  if (!origins) throw new ConfigError(["CODEC_SERVER_CORS_ORIGINS: is required with NODE_ENV=production: the Web UI's origin, e.g. https://temporal-ui.example.com"]);
  return { port: data.CODEC_SERVER_PORT, host: data.CODEC_SERVER_HOST, corsOrigins: origins.split(','), auth, bodyLimitBytes: data.CODEC_SERVER_BODY_LIMIT_BYTES };
}

// The pino options every process shares (name, level, trace context, redaction), in a module of its
// own so the services that never load the Temporal worker runtime can use them too.
import type { LoggerOptions } from 'pino';
import { traceContextMixin } from './telemetry/log-trace-context.js';

/**
 * Where a secret could ride along in a logged object, replaced by `[redacted]` before the line is
 * written: credentials in request headers (an API key, a session cookie, Stripe's signature), and
 * any field named for a secret, at the top or one level down (pino's paths match no deeper; log a
 * setting object, never a whole environment). Card data and customers' details are kept out of
 * logs by what the code logs (IDs, types, statuses), not by this list.
 */
export const REDACTED_LOG_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["stripe-signature"]',
  'headers.authorization',
  'headers.cookie',
  'headers["stripe-signature"]',
  ...['authorization', 'password', 'secret', 'secrets', 'apiKey', 'token', 'connectionString', 'databaseUrl', 'secretKey', 'webhookSecret'].flatMap(
    (field) => [field, `*.${field}`],
  ),
];

/** The options every process's pino logger shares: its name, level, trace context and redaction. */
export function loggerOptions(name: string): LoggerOptions {
  return { name, level: process.env.LOG_LEVEL ?? 'info', mixin: traceContextMixin, redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' } };
}


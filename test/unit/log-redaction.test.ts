// pino redacts credentials wherever a logged object carries them in the usual places: request
// headers (Authorization, cookies, Stripe-Signature) and fields named for secrets.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/platform/logger.js';

function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { logger: createLogger('redaction-test', sink), lines };
}

describe('log redaction', () => {
  it('replaces API keys, cookies, webhook signatures, passwords and secrets with [redacted], and keeps the rest', () => {
    const { logger, lines } = capture();
    logger.info({ req: { method: 'POST', url: '/v1/orders', headers: { authorization: 'Bearer opk_leaked_key', cookie: 'session=leaked', 'stripe-signature': 't=1,v1=leaked', 'idempotency-key': 'k-1' } } }, 'request');
    logger.warn({ headers: { authorization: 'Bearer opk_other_leak' } }, 'headers');
    logger.error({ password: 'pg-leaked', secret: 'whsec_leaked', settings: { webhookSecret: 'whsec_leaked_too', databaseUrl: 'postgres://u:leaked@h/db', port: 3000 } }, 'settings');
    logger.info({ nats: { password: 'nats-leaked', user: 'outbox' }, stripe: { secretKey: 'sk_test_leaked' } }, 'clients');
    const text = lines.join('');
    expect(text).not.toMatch(/leak/);
    expect(text.match(/\[redacted\]/g)).toHaveLength(10);
    // What is not a secret stays readable.
    for (const kept of ['"idempotency-key":"k-1"', '"url":"/v1/orders"', '"port":3000', '"user":"outbox"']) expect(text).toContain(kept);
  });
});

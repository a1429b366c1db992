// Proves a production worker and API with no payload keys refuse to start: one line naming
// PAYLOAD_KEYS, exit 2, before anything connects.
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';

const COMMON = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
  TEMPORAL_ADDRESS: '127.0.0.1:1',
};

describe('payload keys are required in production', () => {
  it('the worker exits 2 with one line naming PAYLOAD_KEYS', async () => {
    const result = await runCli('src/worker.ts', [], { ...COMMON, STRIPE_SECRET_KEY: 'sk_test_x', WORKER_DEPLOYMENT_NAME: 'order-payments' });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^worker: PAYLOAD_KEYS: is required with NODE_ENV=production: set PAYLOAD_KEYS=/)]);
  });

  it('the API exits 2 with one line naming PAYLOAD_KEYS; a malformed ring is named too', async () => {
    const result = await runCli('src/api.ts', [], { ...COMMON, STRIPE_WEBHOOK_SECRET: 'whsec_x' });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^api: PAYLOAD_KEYS: is required with NODE_ENV=production/)]);
    const short = await runCli('src/api.ts', [], { ...COMMON, STRIPE_WEBHOOK_SECRET: 'whsec_x', PAYLOAD_KEYS: 'k1=c2hvcnQ=' });
    expect(short.code).toBe(2);
    expect(short.stderr).toContain("api: PAYLOAD_KEYS: key 'k1' must be the base64 of exactly 32 bytes, got 5");
  });
});

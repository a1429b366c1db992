// Proves the codec server refuses what it should with the right 4xx, never echoing a payload:
// no token, a wrong token, a foreign origin, an oversized body, garbage JSON, a wrong shape, a
// wrong content type and an unknown key ID; that an authorized caller (static token, the token in
// the dev UI's path, or a JWT from the identity provider's JWKS) gets its payloads decoded; and
// that the audit log names who asked and the namespace, and never the data.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import Fastify, { type FastifyInstance } from 'fastify';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticatorFor } from '../../src/codec-server/caller-auth.js';
import { buildCodecServer } from '../../src/codec-server/server.js';
import { loadCodecServerSettings } from '../../src/codec-server/settings.js';
import { EncryptionCodec } from '../../src/platform/temporal/payload-encryption/encryption-codec.js';
import { PayloadKeyRing } from '../../src/platform/temporal/payload-encryption/key-ring.js';
import { runCli } from '../support/run-cli.js';

const TOKEN = randomBytes(24).toString('hex');
const SECRET = `cust-secret-${randomBytes(6).toString('hex')}`;
const UI_ORIGIN = 'http://localhost:8233';
const codec = new EncryptionCodec(new PayloadKeyRing({ k1: randomBytes(32) }, 'k1'));
const strangerCodec = new EncryptionCodec(new PayloadKeyRing({ k9: randomBytes(32) }, 'k9'));

const logLines: string[] = [];
const logger = pino(
  { level: 'info' },
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  }),
);

const toJson = (payload: Payload) => ({
  metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')])),
  data: Buffer.from(payload.data ?? []).toString('base64'),
});
const order = { orderId: 'O-1', customerId: SECRET, paymentMethod: 'pm_card_visa', amount: 48_193 };

let app: FastifyInstance;
const responses: string[] = [];
async function call(options: { url?: string; token?: string | null; origin?: string; body?: string; contentType?: string; namespace?: string }) {
  const response = await app.inject({
    method: 'POST',
    url: options.url ?? '/decode',
    headers: {
      'content-type': options.contentType ?? 'application/json',
      'x-namespace': options.namespace ?? 'default',
      ...(options.token !== null && { authorization: `Bearer ${options.token ?? TOKEN}` }),
      ...(options.origin && { origin: options.origin }),
    },
    payload: options.body ?? JSON.stringify({ payloads: [toJson(defaultPayloadConverter.toPayload(order))] }),
  });
  responses.push(response.body);
  return response;
}
const encryptedBody = async (withCodec = codec) => JSON.stringify({ payloads: (await withCodec.encode([defaultPayloadConverter.toPayload(order)])).map(toJson) });

beforeAll(async () => {
  app = await buildCodecServer({ codec, authenticate: authenticatorFor({ kind: 'static-token', token: TOKEN }), corsOrigins: [UI_ORIGIN], bodyLimitBytes: 64 * 1024, logger, tokenInPath: true });
});
afterAll(async () => {
  await app.close();
});

describe('codec server: hostile input', () => {
  it('an authorized decode opens the payloads and logs who asked and the namespace, not the data', async () => {
    const response = await call({ body: await encryptedBody(), namespace: 'payments-prod' });
    expect(response.statusCode).toBe(200);
    const [payload] = (JSON.parse(response.body) as { payloads: { metadata: Record<string, string>; data: string }[] }).payloads;
    expect(JSON.parse(Buffer.from(payload?.data ?? '', 'base64').toString('utf8'))).toEqual(order);
    responses.pop(); // the one answer that is meant to hold the data
    expect(logLines.some((line) => line.includes('"subject":"static-token"') && line.includes('"namespace":"payments-prod"') && line.includes('decoded payloads'))).toBe(true);
    const encoded = await call({ url: '/encode' });
    expect(encoded.statusCode).toBe(200);
    expect(encoded.body).not.toContain(Buffer.from(SECRET).toString('base64').slice(0, 12));
  });

  it('no token, a wrong token, and a wrong token in the dev path get 401', async () => {
    expect((await call({ token: null, body: await encryptedBody() })).statusCode).toBe(401);
    expect((await call({ token: 'not-the-token-but-long-enough-000', body: await encryptedBody() })).statusCode).toBe(401);
    expect((await call({ token: null, url: '/ui/wrong-token/decode', body: await encryptedBody() })).statusCode).toBe(401);
    const viaPath = await call({ token: null, url: `/ui/${TOKEN}/decode`, body: await encryptedBody() });
    expect(viaPath.statusCode).toBe(200);
    responses.pop();
  });

  it('a foreign origin gets 403, even with the token; the Web UI origin gets its CORS headers', async () => {
    const foreign = await call({ origin: 'https://evil.example.com', body: await encryptedBody() });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await app.inject({ method: 'OPTIONS', url: '/decode', headers: { origin: UI_ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,x-namespace' } });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(UI_ORIGIN);
    const foreignPreflight = await app.inject({ method: 'OPTIONS', url: '/decode', headers: { origin: 'https://evil.example.com', 'access-control-request-method': 'POST' } });
    expect(foreignPreflight.statusCode).toBe(403);
  });

  it('an oversized body gets 413, garbage JSON, a wrong shape or non-base64 data 400, another content type 415', async () => {
    expect((await call({ body: JSON.stringify({ payloads: [{ data: Buffer.from(SECRET.repeat(4000)).toString('base64') }] }) })).statusCode).toBe(413);
    expect((await call({ body: `{"payloads": [${SECRET}` })).statusCode).toBe(400);
    expect((await call({ body: JSON.stringify({ items: [SECRET] }) })).statusCode).toBe(400);
    expect((await call({ body: JSON.stringify({ payloads: [{ data: `${SECRET}!` }] }) })).statusCode).toBe(400);
    expect((await call({ body: SECRET, contentType: 'text/plain' })).statusCode).toBe(415);
  });

  it('a payload under an unknown key gets 400 naming the key ID, nothing decrypted', async () => {
    const response = await call({ body: await encryptedBody(strangerCodec) });
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({ error: 'payload_not_decrypted', message: expect.stringContaining("key 'k9'") as unknown });
  });

  it('no response but the authorized decodes, and no log line, holds the data', () => {
    const secretForms = [SECRET, Buffer.from(SECRET).toString('base64').slice(0, 12)];
    for (const text of [...responses, ...logLines]) for (const form of secretForms) expect(text).not.toContain(form);
    expect(logLines.filter((line) => line.includes('codec request refused')).length).toBeGreaterThanOrEqual(4);
  });
});

describe('codec server: production access tokens', () => {
  let jwks: FastifyInstance;
  let jwtApp: FastifyInstance;
  let sign: (claims: { aud: string; sub: string }) => Promise<string>;

  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'test', alg: 'RS256', use: 'sig' };
    jwks = Fastify();
    jwks.get('/jwks.json', () => ({ keys: [jwk] }));
    const url = `${await jwks.listen({ port: 0, host: '127.0.0.1' })}/jwks.json`;
    sign = (claims) => new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'test' }).setIssuer('https://login.example.com/').setAudience(claims.aud).setSubject(claims.sub).setExpirationTime('5m').sign(privateKey);
    const settings = loadCodecServerSettings({
      NODE_ENV: 'production',
      CODEC_SERVER_JWKS_URL: url,
      CODEC_SERVER_JWT_ISSUER: 'https://login.example.com/',
      CODEC_SERVER_JWT_AUDIENCE: 'temporal-ui',
      CODEC_SERVER_CORS_ORIGINS: 'https://temporal-ui.example.com',
    });
    jwtApp = await buildCodecServer({ codec, authenticate: authenticatorFor(settings.auth), corsOrigins: settings.corsOrigins, bodyLimitBytes: settings.bodyLimitBytes, logger });
  });
  afterAll(async () => {
    await jwtApp.close();
    await jwks.close();
  });

  it("the Web UI's access token, checked against the JWKS, issuer and audience, is accepted and named in the log; another audience is not", async () => {
    const post = async (token: string) =>
      jwtApp.inject({ method: 'POST', url: '/decode', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-namespace': 'default' }, payload: await encryptedBody() });
    expect((await post(await sign({ aud: 'temporal-ui', sub: 'ada@example.com' }))).statusCode).toBe(200);
    expect(logLines.some((line) => line.includes('"subject":"ada@example.com"'))).toBe(true);
    expect((await post(await sign({ aud: 'another-app', sub: 'mallory' }))).statusCode).toBe(401);
    expect((await post(TOKEN)).statusCode).toBe(401);
  });

  it('npm run codec-server without a token exits 2 with one line naming CODEC_SERVER_TOKEN', async () => {
    const result = await runCli('src/codec-server.ts', [], {});
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^codec-server: CODEC_SERVER_TOKEN: is required/)]);
  });

  it('production refuses the static token and requires the Web UI origins', () => {
    expect(() => loadCodecServerSettings({ NODE_ENV: 'production', CODEC_SERVER_TOKEN: TOKEN })).toThrow(/CODEC_SERVER_TOKEN: a development-only setting/);
    expect(() => loadCodecServerSettings({ NODE_ENV: 'production' })).toThrow(/CODEC_SERVER_JWKS_URL: is required/);
    expect(() => loadCodecServerSettings({})).toThrow(/CODEC_SERVER_TOKEN: is required/);
    expect(loadCodecServerSettings({ CODEC_SERVER_TOKEN: TOKEN }).corsOrigins).toEqual(['http://localhost:8233', 'http://127.0.0.1:8233']);
  });
});

// The payload encryption settings of every process that talks to Temporal: which keys it holds
// and which is current, from PAYLOAD_KEYS (+ PAYLOAD_KEY_CURRENT) or PAYLOAD_KEYS_FILE. Outside
// production an unconfigured process uses the public development ring; in production it refuses
// to start (exit 2, as every bad setting does).
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../../config/config-error.js';
import { developmentKeyRing, KEY_BYTES, KEY_ID_PATTERN, PayloadKeyRing } from './key-ring.js';
import type { PayloadKeyProvider } from './key-provider.js';

type Env = Record<string, string | undefined>;

export interface PayloadEncryptionSettings {
  keys: PayloadKeyProvider;
  /** Where the keys came from, for the start-up log: never the keys. */
  source: string;
}

const keyEntry = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9._-]{1,64}=[A-Za-z0-9+/]+={0,2}$/, 'each entry must be <key ID>=<base64 of 32 random bytes>, e.g. k1=$(openssl rand -base64 32)');

const keyMaterial = z
  .string()
  .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'must be base64')
  .refine((value) => Buffer.from(value, 'base64').length === KEY_BYTES, `must be the base64 of exactly ${KEY_BYTES} bytes (openssl rand -base64 32)`);

const keyFileSchema = z.object({
  current: z.string().regex(KEY_ID_PATTERN, "must be a key ID: 1-64 letters, digits, '.', '-' or '_'"),
  keys: z.record(z.string().regex(KEY_ID_PATTERN, "key IDs must be 1-64 letters, digits, '.', '-' or '_'"), keyMaterial),
});

const envSchema = z.object({
  PAYLOAD_KEYS: z.string().optional(),
  PAYLOAD_KEY_CURRENT: z.string().regex(KEY_ID_PATTERN, "must be a key ID: 1-64 letters, digits, '.', '-' or '_'").optional(),
  PAYLOAD_KEYS_FILE: z.string().optional(),
});

const blankIsUnset = (env: Env): Env =>
  Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''));

export function loadPayloadEncryptionSettings(env: Env = process.env): PayloadEncryptionSettings {
  const parsed = envSchema.safeParse(blankIsUnset(env));
  if (!parsed.success) throw ConfigError.fromZod(parsed.error);
  const { PAYLOAD_KEYS, PAYLOAD_KEY_CURRENT, PAYLOAD_KEYS_FILE } = parsed.data;
  if (PAYLOAD_KEYS && PAYLOAD_KEYS_FILE) throw new ConfigError(['PAYLOAD_KEYS and PAYLOAD_KEYS_FILE: set one of them, not both']);
  if (PAYLOAD_KEYS_FILE) return { keys: keyRingFromFile(PAYLOAD_KEYS_FILE), source: `PAYLOAD_KEYS_FILE ${PAYLOAD_KEYS_FILE}` };
  if (PAYLOAD_KEYS) return { keys: keyRingFromList(PAYLOAD_KEYS, PAYLOAD_KEY_CURRENT), source: 'PAYLOAD_KEYS' };
  if (env.NODE_ENV === 'production') {
    throw new ConfigError([
      'PAYLOAD_KEYS: is required with NODE_ENV=production: set PAYLOAD_KEYS=<key ID>=<base64 of 32 random bytes> (or PAYLOAD_KEYS_FILE); payloads are never written unencrypted (docs/encryption.md)',
    ]);
  }
  return { keys: developmentKeyRing(), source: 'the development key ring (public; NODE_ENV=production refuses it)' };
}

/** `k1=<base64>,k2=<base64>`; the current key is PAYLOAD_KEY_CURRENT, or the only one. */
export function keyRingFromList(list: string, currentId: string | undefined): PayloadKeyRing {
  const entries = list.split(',').map((entry) => entry.trim());
  const problems: string[] = [];
  const keys: Record<string, Buffer> = {};
  for (const entry of entries) {
    const checked = keyEntry.safeParse(entry);
    const [id = '', material = ''] = entry.split(/=(.*)/s);
    if (!checked.success) {
      problems.push(`PAYLOAD_KEYS: entry '${id || '(empty)'}=…': ${checked.error.issues[0]?.message ?? 'malformed'}`);
      continue;
    }
    const key = Buffer.from(material, 'base64');
    if (key.length !== KEY_BYTES) problems.push(`PAYLOAD_KEYS: key '${id}' must be the base64 of exactly ${KEY_BYTES} bytes, got ${key.length} (openssl rand -base64 32)`);
    else if (id in keys) problems.push(`PAYLOAD_KEYS: key ID '${id}' appears twice`);
    else keys[id] = key;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const ids = Object.keys(keys);
  const current = currentId ?? (ids.length === 1 ? ids[0] : undefined);
  if (current === undefined) throw new ConfigError([`PAYLOAD_KEY_CURRENT: is required when PAYLOAD_KEYS holds several keys (${ids.join(', ')}): name the one new payloads are written with`]);
  if (!(current in keys)) throw new ConfigError([`PAYLOAD_KEY_CURRENT: '${current}' is not in PAYLOAD_KEYS (${ids.join(', ')})`]);
  return new PayloadKeyRing(keys, current);
}

/** `{ "current": "k2", "keys": { "k1": "<base64>", "k2": "<base64>" } }` */
export function keyRingFromFile(file: string): PayloadKeyRing {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError([`PAYLOAD_KEYS_FILE: cannot read ${file} as JSON (${error instanceof Error ? error.message : String(error)})`]);
  }
  const parsed = keyFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `PAYLOAD_KEYS_FILE ${file}: ${issue.path.join('.') || 'file'}: ${issue.message}`));
  }
  const keys = Object.fromEntries(Object.entries(parsed.data.keys).map(([id, material]) => [id, Buffer.from(material, 'base64')]));
  if (!(parsed.data.current in keys)) throw new ConfigError([`PAYLOAD_KEYS_FILE ${file}: current: '${parsed.data.current}' is not one of its keys (${Object.keys(keys).join(', ')})`]);
  return new PayloadKeyRing(keys, parsed.data.current);
}

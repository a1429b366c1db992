// Request parameters in Stripe's bracket form encoding: typed readers that answer Stripe's
// validation errors, the unknown-parameter check, and the fingerprint idempotency compares.
import { invalidRequest } from './errors.js';

/** A value decoded from Stripe's bracket form encoding (`a[b][0]=c`) by `qs`. */
export type FormValue = string | FormValue[] | { [key: string]: FormValue };
export type FormParams = Record<string, FormValue>;

/** Narrows what `qs.parse` returns (its types admit `undefined` leaves) to form values. */
export function toFormParams(parsed: unknown): FormParams {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return {};
  }
  const out: FormParams = {};
  for (const [key, value] of Object.entries(parsed)) {
    const converted = toFormValue(value);
    if (converted !== undefined) out[key] = converted;
  }
  return out;
}

function toFormValue(value: unknown): FormValue | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    return value.map(toFormValue).filter((v): v is FormValue => v !== undefined);
  }
  if (value !== null && typeof value === 'object') return toFormParams(value);
  return undefined;
}

/**
 * Stable text for comparing two requests' parameters, so that the same parameters in another
 * order (or re-encoded) count as the same request under one idempotency key.
 */
export function fingerprint(params: FormParams): string {
  return JSON.stringify(sortKeys(params));
}

function sortKeys(value: FormValue): FormValue {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(sortKeys);
  const sorted: FormParams = {};
  for (const key of Object.keys(value).sort()) {
    const child = value[key];
    if (child !== undefined) sorted[key] = sortKeys(child);
  }
  return sorted;
}

export function rejectUnknownParams(
  params: FormParams,
  supported: readonly string[],
  notEmulated: readonly string[] = [],
): void {
  for (const name of Object.keys(params)) {
    if (supported.includes(name)) continue;
    if (notEmulated.includes(name)) {
      throw invalidRequest(
        `Received unsupported parameter: ${name}. Stripe accepts it, but this emulator does not implement it.`,
        { param: name, code: 'parameter_unknown' },
      );
    }
    throw invalidRequest(`Received unknown parameter: ${name}`, { param: name, code: 'parameter_unknown' });
  }
}

export function readString(params: FormParams, name: string, param = name): string | undefined {
  const value = params[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    throw invalidRequest(`Invalid string: ${describe(value)}`, { param });
  }
  return value;
}

export function requireString(params: FormParams, name: string): string {
  const value = readString(params, name);
  if (value === undefined || value === '') {
    throw invalidRequest(`Missing required param: ${name}.`, { param: name, code: 'parameter_missing' });
  }
  return value;
}

export function readInteger(
  params: FormParams,
  name: string,
  bounds: { min?: number; max?: number } = {},
): number | undefined {
  const raw = params[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^-?\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw invalidRequest(`Invalid integer: ${describe(raw)}`, { param: name, code: 'parameter_invalid_integer' });
  }
  const value = Number(raw);
  if (bounds.min !== undefined && value < bounds.min) {
    throw invalidRequest(`This value must be greater than or equal to ${bounds.min}.`, {
      param: name,
      code: 'parameter_invalid_integer',
    });
  }
  if (bounds.max !== undefined && value > bounds.max) {
    throw invalidRequest(`This value must be less than or equal to ${bounds.max}.`, {
      param: name,
      code: 'parameter_invalid_integer',
    });
  }
  return value;
}

export function readBoolean(params: FormParams, name: string, param = name): boolean | undefined {
  const raw = params[name];
  if (raw === undefined) return undefined;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw invalidRequest(`Invalid boolean: ${describe(raw)}`, { param });
}

export function readHash(params: FormParams, name: string): FormParams | undefined {
  const raw = params[name];
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw === 'string' || Array.isArray(raw)) {
    throw invalidRequest(`Invalid hash`, { param: name });
  }
  return raw;
}

export function readEnum<T extends string>(
  params: FormParams,
  name: string,
  allowed: readonly T[],
): T | undefined {
  const value = readString(params, name);
  if (value === undefined) return undefined;
  const match = allowed.find((candidate) => candidate === value);
  if (match === undefined) {
    throw invalidRequest(`Invalid ${name}: must be one of ${joinChoices(allowed)}`, { param: name });
  }
  return match;
}

/** Stripe's metadata limits: 50 keys, keys up to 40 characters, values up to 500. */
export function readMetadata(params: FormParams): Record<string, string> {
  const hash = readHash(params, 'metadata');
  const metadata: Record<string, string> = {};
  if (hash === undefined) return metadata;
  const keys = Object.keys(hash);
  if (keys.length > 50) {
    throw invalidRequest('Invalid metadata: metadata cannot have more than 50 keys', { param: 'metadata' });
  }
  for (const key of keys) {
    const value = hash[key];
    if (typeof value !== 'string') {
      throw invalidRequest(`Invalid value for metadata[${key}]: must be a string`, { param: `metadata[${key}]` });
    }
    if (key.length > 40) {
      throw invalidRequest(`Metadata key ${key} exceeds the 40 character limit`, { param: `metadata[${key}]` });
    }
    if (value.length > 500) {
      throw invalidRequest(`Metadata values can have up to 500 characters, but you passed in a value that is ${value.length} characters.`, {
        param: `metadata[${key}]`,
      });
    }
    // An empty value unsets a key in Stripe; on create that means "absent".
    if (value !== '') metadata[key] = value;
  }
  return metadata;
}

export function readStringList(params: FormParams, name: string): string[] {
  const raw = params[name];
  if (raw === undefined || raw === '') return [];
  const items = Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : Object.values(raw);
  return items.map((item) => {
    if (typeof item !== 'string') throw invalidRequest(`Invalid array`, { param: name });
    return item;
  });
}

function joinChoices(values: readonly string[]): string {
  if (values.length <= 1) return values.join('');
  return `${values.slice(0, -1).join(', ')}, or ${values.at(-1) ?? ''}`;
}

function describe(value: FormValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

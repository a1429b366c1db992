// Stripe's idempotency keys, per account: a key reserved while its request executes, its first
// answer kept for replay, reuse on another endpoint or with other parameters detected, and expiry.
import type { Clock } from './clock.js';

export const DEFAULT_RETENTION_MS = 24 * 60 * 60 * 1000;
export const MAX_KEY_LENGTH = 255;

/** The first answer given under a key, replayed byte for byte. */
export interface SavedResponse {
  status: number;
  body: string;
  headers: Readonly<Record<string, string>>;
  requestId: string;
}

interface Entry {
  /** `POST /v1/payment_intents`: Stripe compares the endpoint before the parameters. */
  endpoint: string;
  fingerprint: string;
  createdAtMs: number;
  /** Null while the first request is still executing. */
  response: SavedResponse | null;
}

export type Lookup =
  | { kind: 'absent' }
  | { kind: 'replay'; response: SavedResponse }
  | { kind: 'in_use' }
  | { kind: 'endpoint_mismatch'; originalEndpoint: string }
  | { kind: 'params_mismatch' };

export interface Reservation {
  complete(response: SavedResponse): void;
}

export interface KeySummary {
  account: string;
  key: string;
  endpoint: string;
  state: 'in_progress' | 'completed';
  status: number | null;
  createdAtMs: number;
  expiresAtMs: number | null;
}

/**
 * Stripe's idempotency layer: keys are scoped to an account, a key is reserved once execution
 * begins, and its first answer is kept for the retention period (24 hours on Stripe), measured
 * on the emulator's clock so tests can make keys expire.
 */
export class IdempotencyStore {
  readonly #entries = new Map<string, Entry>();
  #lastSweepMs = 0;

  constructor(
    private readonly clock: Clock,
    readonly retentionMs: number = DEFAULT_RETENTION_MS,
  ) {}

  lookup(account: string, key: string, endpoint: string, fingerprint: string): Lookup {
    const id = entryId(account, key);
    const entry = this.#entries.get(id);
    if (!entry) return { kind: 'absent' };
    if (this.#expired(entry)) {
      this.#entries.delete(id);
      return { kind: 'absent' };
    }
    if (entry.endpoint !== endpoint) return { kind: 'endpoint_mismatch', originalEndpoint: entry.endpoint };
    if (entry.fingerprint !== fingerprint) return { kind: 'params_mismatch' };
    if (entry.response === null) return { kind: 'in_use' };
    return { kind: 'replay', response: entry.response };
  }

  /** Call only right after `lookup` answered `absent`, with no await in between. */
  reserve(account: string, key: string, endpoint: string, fingerprint: string): Reservation {
    this.#sweep();
    const entry: Entry = { endpoint, fingerprint, createdAtMs: this.clock.nowMs(), response: null };
    const id = entryId(account, key);
    this.#entries.set(id, entry);
    return {
      complete: (response) => {
        // A reset while the request was executing dropped the entry; it must not come back.
        if (this.#entries.get(id) === entry) entry.response = response;
      },
    };
  }

  summaries(): KeySummary[] {
    return [...this.#entries.entries()].map(([id, entry]) => {
      const [account = '', key = ''] = id.split('\u0000');
      return {
        account,
        key,
        endpoint: entry.endpoint,
        state: entry.response === null ? 'in_progress' : 'completed',
        status: entry.response?.status ?? null,
        createdAtMs: entry.createdAtMs,
        expiresAtMs: entry.response === null ? null : entry.createdAtMs + this.retentionMs,
      };
    });
  }

  reset(): void {
    this.#entries.clear();
  }

  #expired(entry: Entry): boolean {
    // A key still executing is never forgotten: that would let a duplicate run concurrently.
    return entry.response !== null && this.clock.nowMs() - entry.createdAtMs >= this.retentionMs;
  }

  #sweep(): void {
    const now = this.clock.nowMs();
    if (now - this.#lastSweepMs < 60_000) return;
    this.#lastSweepMs = now;
    for (const [id, entry] of this.#entries) {
      if (this.#expired(entry)) this.#entries.delete(id);
    }
  }
}

function entryId(account: string, key: string): string {
  return `${account}\u0000${key}`;
}

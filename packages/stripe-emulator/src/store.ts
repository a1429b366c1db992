// The emulator's objects, per account: each secret key's PaymentIntents, charges, refunds,
// disputes, early fraud warnings, holds and events.
import { createHash } from 'node:crypto';
import type Stripe from 'stripe';
import { redactKey } from './auth.js';
import { EventLog, type EmulatedEvent } from './events.js';

/**
 * Everything one secret key can see. Stripe scopes objects and idempotency keys to the account;
 * the emulator treats each distinct secret key as its own account.
 */
export interface AccountState {
  id: string;
  /** The key with its middle hidden, for state dumps. */
  keyHint: string;
  paymentIntents: Map<string, Stripe.PaymentIntent>;
  charges: Map<string, Stripe.Charge>;
  refunds: Map<string, Stripe.Refund>;
  disputes: Map<string, Stripe.Dispute>;
  earlyFraudWarnings: Map<string, Stripe.Radar.EarlyFraudWarning>;
  /** Disputes waiting for a response (`needs_response`, `warning_needs_response`): those that can go past due. */
  respondableDisputes: Set<string>;
  /** PaymentIntents in `requires_capture`: the holds that can lapse (holds.ts). */
  heldPaymentIntents: Set<string>;
  events: EventLog;
}

/** Hears every event any account records, with the account it belongs to. */
export type AccountEventListener = (account: AccountState, event: EmulatedEvent) => void;

export class Store {
  readonly #accounts = new Map<string, AccountState>();

  constructor(private readonly onEvent: AccountEventListener = () => undefined) {}

  account(secretKey: string): AccountState {
    const existing = this.#accounts.get(secretKey);
    if (existing) return existing;
    const created: AccountState = {
      // Derived from the key so an account keeps its ID across emulator restarts.
      id: `acct_${createHash('sha256').update(secretKey).digest('hex').slice(0, 16)}`,
      keyHint: redactKey(secretKey),
      paymentIntents: new Map(),
      charges: new Map(),
      refunds: new Map(),
      disputes: new Map(),
      earlyFraudWarnings: new Map(),
      respondableDisputes: new Set(),
      heldPaymentIntents: new Set(),
      events: new EventLog((event) => {
        this.onEvent(created, event);
      }),
    };
    this.#accounts.set(secretKey, created);
    return created;
  }

  accounts(): AccountState[] {
    return [...this.#accounts.values()];
  }

  reset(): void {
    this.#accounts.clear();
  }
}

/** Map values newest first: maps keep insertion order, and Stripe lists newest first. */
export function newestFirst<T>(map: ReadonlyMap<string, T>): T[] {
  return [...map.values()].reverse();
}

import type Stripe from 'stripe';
import { Clock } from './clock.js';
import { Counters, type CounterSnapshot } from './counters.js';
import type { EmulatedEvent } from './events.js';
import { FaultInjector, type FaultRule } from './faults.js';
import { DEFAULT_RETENTION_MS, IdempotencyStore, type KeySummary } from './idempotency.js';
import type { PipelineDeps } from './pipeline.js';
import { newestFirst, Store } from './store.js';

export interface AccountDump {
  id: string;
  keyHint: string;
  paymentIntents: Stripe.PaymentIntent[];
  charges: Stripe.Charge[];
  refunds: Stripe.Refund[];
  eventCount: number;
  idempotencyKeys: KeySummary[];
}

export interface StateDump {
  clock: { nowMs: number; offsetMs: number };
  retentionMs: number;
  counters: CounterSnapshot;
  faults: FaultRule[];
  accounts: AccountDump[];
}

export interface EventFilter {
  type?: string | undefined;
  /** An account ID (`acct_...`); omitted, events of every account. */
  account?: string | undefined;
}

/** All in-memory state of one emulator, shared by the Stripe API, the control API and tests. */
export class EmulatorCore implements PipelineDeps {
  readonly clock = new Clock();
  readonly store = new Store();
  readonly faults = new FaultInjector();
  readonly counters = new Counters();
  readonly idempotency: IdempotencyStore;

  constructor(retentionMs: number = DEFAULT_RETENTION_MS) {
    this.idempotency = new IdempotencyStore(this.clock, retentionMs);
  }

  dump(): StateDump {
    const keys = this.idempotency.summaries();
    return {
      clock: { nowMs: this.clock.nowMs(), offsetMs: this.clock.offsetMs },
      retentionMs: this.idempotency.retentionMs,
      counters: this.counters.snapshot(),
      faults: this.faults.list(),
      accounts: this.store.accounts().map((account) => ({
        id: account.id,
        keyHint: account.keyHint,
        paymentIntents: structuredClone(newestFirst(account.paymentIntents)),
        charges: structuredClone(newestFirst(account.charges)),
        refunds: structuredClone(newestFirst(account.refunds)),
        eventCount: account.events.newestFirst().length,
        idempotencyKeys: keys.filter((key) => key.account === account.id),
      })),
    };
  }

  /** Newest first across the selected accounts. */
  events(filter: EventFilter = {}): EmulatedEvent[] {
    return this.store
      .accounts()
      .filter((account) => filter.account === undefined || account.id === filter.account)
      .flatMap((account) => account.events.newestFirst())
      .filter((event) => filter.type === undefined || event.type === filter.type)
      .sort((a, b) => b.created - a.created);
  }

  /** Forgets objects, keys, events, counters, fault rules and clock offset: a fresh emulator. */
  reset(): void {
    this.store.reset();
    this.idempotency.reset();
    this.faults.clear();
    this.counters.reset();
    this.clock.reset();
  }
}

// The emulator's counters (requests, replays, idempotency conflicts, faults fired, responses by
// status, webhook deliveries, payment actions), read through the control API and by tests.
export const FAULT_KINDS = [
  'drop_response',
  'fail_before_execution',
  'fail_during_execution',
  'latency',
  'webhook_duplicate',
  'webhook_reorder',
  'webhook_delay',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface WebhookCounters {
  /** Every POST to an endpoint: first attempts, retries and duplicates. */
  deliveries: number;
  /** Attempts after a non-2xx answer, a timeout or a refused connection. */
  retries: number;
  /** Extra deliveries of an event already delivered (the webhook_duplicate fault). */
  duplicates: number;
  /** Attempts answered 2xx. */
  succeeded: number;
  /** Attempts that failed (non-2xx, timeout, connection error). */
  failedAttempts: number;
  /** Deliveries abandoned after the last retry. */
  abandoned: number;
}

/** What the PaymentIntents did with their money: executed requests only, never replays. */
export interface PaymentCounters {
  /** Holds placed (`requires_capture`), at once or after settling. */
  authorizations: number;
  /** Holds captured. */
  captures: number;
  /** PaymentIntents cancelled by a request (a hold voided, or an undecided payment abandoned). */
  cancels: number;
  /** Holds Stripe let lapse at their `capture_before`. */
  holdsLapsed: number;
  /** Refunds created. */
  refunds: number;
}

export interface CounterSnapshot {
  /** Every request to the Stripe API surface, including rejected ones. */
  requests: number;
  /** Answers served from a saved idempotent response. */
  replays: number;
  /** 409 idempotency_key_in_use plus 400 idempotency_error answers. */
  conflicts: number;
  idempotencyKeyInUse: number;
  idempotencyErrors: number;
  faults: Record<FaultKind, number>;
  responsesByStatus: Record<string, number>;
  webhooks: WebhookCounters;
  payments: PaymentCounters;
}

/** What chaos runs and tests read to prove how often retries, replays and faults happened. */
export class Counters {
  #snapshot = Counters.#empty();

  static #empty(): CounterSnapshot {
    return {
      requests: 0,
      replays: 0,
      conflicts: 0,
      idempotencyKeyInUse: 0,
      idempotencyErrors: 0,
      faults: Object.fromEntries(FAULT_KINDS.map((kind) => [kind, 0])) as Record<FaultKind, number>,
      responsesByStatus: {},
      webhooks: { deliveries: 0, retries: 0, duplicates: 0, succeeded: 0, failedAttempts: 0, abandoned: 0 },
      payments: { authorizations: 0, captures: 0, cancels: 0, holdsLapsed: 0, refunds: 0 },
    };
  }

  request(): void {
    this.#snapshot.requests += 1;
  }

  replay(): void {
    this.#snapshot.replays += 1;
  }

  keyInUse(): void {
    this.#snapshot.idempotencyKeyInUse += 1;
    this.#snapshot.conflicts += 1;
  }

  idempotencyError(): void {
    this.#snapshot.idempotencyErrors += 1;
    this.#snapshot.conflicts += 1;
  }

  fault(kind: FaultKind): void {
    this.#snapshot.faults[kind] += 1;
  }

  response(status: number): void {
    const key = String(status);
    this.#snapshot.responsesByStatus[key] = (this.#snapshot.responsesByStatus[key] ?? 0) + 1;
  }

  webhook(counter: keyof WebhookCounters): void {
    this.#snapshot.webhooks[counter] += 1;
  }

  payment(counter: Exclude<keyof PaymentCounters, 'holdsLapsed'>): void {
    this.#snapshot.payments[counter] += 1;
  }

  holdsLapsed(count: number): void {
    this.#snapshot.payments.holdsLapsed += count;
  }

  snapshot(): CounterSnapshot {
    return structuredClone(this.#snapshot);
  }

  reset(): void {
    this.#snapshot = Counters.#empty();
  }
}

/** How much work each part of the benchmark does. Sized for a 2-core machine: a few minutes in full. */
export interface BenchPlan {
  name: 'full' | 'quick';
  /** Orders at each concurrency level, for the baseline and the saga alike. */
  levels: { concurrency: number; orders: number }[];
  /** Each level's orders are run in this many alternating rounds of baseline and saga. */
  rounds: number;
  warmupOrders: number;
  /** Sagas started at once to measure the worker's memory with that many in flight. */
  inFlight: number;
  /** The same with a worker whose heap is capped (MEMORY_CAPPED_WORKER), to show the trade. */
  inFlightCapped: boolean;
  ledger: { rounds: number; perRound: number };
  replays: number;
  /** Checkouts timed to the payment outcome, one call against start-then-poll, at 16 clients. */
  paymentOutcome: { orders: number; rounds: number; pollIntervalMs: number };
  /** Saga throughput with the worker's metrics and traces on against off, in alternating rounds. */
  telemetry: { concurrency: number; orders: number; rounds: number };
}

export const FULL_PLAN: BenchPlan = {
  name: 'full',
  levels: [
    { concurrency: 1, orders: 24 },
    { concurrency: 16, orders: 192 },
    { concurrency: 64, orders: 384 },
    { concurrency: 256, orders: 768 },
  ],
  rounds: 3,
  warmupOrders: 64,
  inFlight: 1000,
  inFlightCapped: true,
  ledger: { rounds: 12, perRound: 200 },
  replays: 500,
  paymentOutcome: { orders: 192, rounds: 3, pollIntervalMs: 250 },
  telemetry: { concurrency: 64, orders: 384, rounds: 3 },
};

export const QUICK_PLAN: BenchPlan = {
  name: 'quick',
  levels: [
    { concurrency: 1, orders: 8 },
    { concurrency: 16, orders: 64 },
    { concurrency: 64, orders: 128 },
    { concurrency: 256, orders: 256 },
  ],
  rounds: 1,
  warmupOrders: 16,
  inFlight: 200,
  inFlightCapped: false,
  ledger: { rounds: 3, perRound: 50 },
  replays: 50,
  paymentOutcome: { orders: 32, rounds: 1, pollIntervalMs: 250 },
  telemetry: { concurrency: 64, orders: 128, rounds: 1 },
};

/**
 * A worker tuned for memory instead of CPU: V8's heaps capped (it otherwise lets garbage grow to
 * a multiple of what is live) and glibc limited to two malloc arenas (it otherwise keeps one per
 * thread, and the Rust core runs many). Chosen by measuring 1,000 sagas in flight on fresh
 * workers (2 cores): default settings peaked at 564 MB RSS and 25 ms CPU per order; two arenas
 * alone at 537 MB; a 128 MB old space with two arenas at 337 MB; adding 4 MB semi-spaces at
 * 275 MB and 31 ms; a 96 MB old space with 2 MB semi-spaces at 264 MB but 36 ms.
 */
export const MEMORY_CAPPED_WORKER = {
  nodeFlags: ['--max-old-space-size=128', '--max-semi-space-size=4'],
  env: { MALLOC_ARENA_MAX: '2' },
} as const;

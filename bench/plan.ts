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
};

/**
 * A worker tuned for memory instead of CPU: V8's heaps capped (it otherwise lets garbage grow to
 * a multiple of what is live) and glibc limited to two malloc arenas (it otherwise keeps one per
 * thread, and the Rust core runs many).
 */
export const MEMORY_CAPPED_WORKER = {
  nodeFlags: ['--max-old-space-size=96', '--max-semi-space-size=2'],
  env: { MALLOC_ARENA_MAX: '2' },
} as const;

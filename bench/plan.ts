/** How much work each part of the benchmark does. Sized for a 2-core machine: a few minutes in full. */
export interface BenchPlan {
  name: 'full' | 'quick';
  /** Orders per run at each concurrency level, for the baseline and the saga alike. */
  levels: { concurrency: number; orders: number }[];
  warmupOrders: number;
  /** Sagas started at once to measure the worker's memory with that many in flight. */
  inFlight: number;
  ledger: { rounds: number; perRound: number };
  replays: number;
}

export const FULL_PLAN: BenchPlan = {
  name: 'full',
  levels: [
    { concurrency: 1, orders: 40 },
    { concurrency: 16, orders: 320 },
    { concurrency: 64, orders: 640 },
    { concurrency: 256, orders: 1024 },
  ],
  warmupOrders: 64,
  inFlight: 1000,
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
  warmupOrders: 16,
  inFlight: 200,
  ledger: { rounds: 3, perRound: 50 },
  replays: 50,
};

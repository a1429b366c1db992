/** How much work each part of the benchmark does. Sized for a 2-core machine: a few minutes in full. */
export interface BenchPlan {
  name: 'full' | 'quick';
  /** Orders at each concurrency level, for the baseline and the saga alike. */
  levels: { concurrency: number; orders: number }[];
  /** Each level's orders are run in this many alternating rounds of baseline and saga. */
  rounds: number;
  warmupOrders: number;
  /** Sagas started at once on a fresh production worker (NODE_ENV=production sh scripts/run.sh worker) to measure its memory. */
  inFlight: number;
  /** The same on the build started bare (node dist/worker.js, no memory defaults), for the CPU the defaults cost. */
  inFlightUntuned: boolean;
  /** Fresh starts of each, alternating which goes first. */
  inFlightRounds: number;
  /** Sagas on one discarded fresh start before those rounds (the first start after a build runs cold). */
  inFlightWarmUp: number;
  /** The saga at one concurrency on one worker process against two on the same task queue, in alternating rounds. */
  scaleOut: { concurrency: number; orders: number; rounds: number };
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
  inFlightUntuned: true,
  inFlightRounds: 3,
  inFlightWarmUp: 200,
  scaleOut: { concurrency: 64, orders: 384, rounds: 3 },
  ledger: { rounds: 12, perRound: 200 },
  replays: 500,
  paymentOutcome: { orders: 192, rounds: 3, pollIntervalMs: 250 },
  // 240 orders a round: at 64 in flight a round of 96 was about one and a half waves, so its
  // ramp and tail moved each round's ratio by ±15%; at 240 the steady state dominates.
  telemetry: { concurrency: 64, orders: 1200, rounds: 5 },
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
  inFlightUntuned: false,
  inFlightRounds: 1,
  inFlightWarmUp: 0,
  scaleOut: { concurrency: 64, orders: 128, rounds: 1 },
  ledger: { rounds: 3, perRound: 50 },
  replays: 50,
  paymentOutcome: { orders: 32, rounds: 1, pollIntervalMs: 250 },
  telemetry: { concurrency: 64, orders: 128, rounds: 1 },
};

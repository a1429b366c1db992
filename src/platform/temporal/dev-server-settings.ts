/**
 * The dynamic config every Temporal dev server this project starts runs with (the stack's, the
 * tests', the bench's and the chaos run's), as `temporal server start-dev` arguments.
 *
 * The dev server has one history shard, and a shard's transfer-queue reader loads newly written
 * tasks at most `history.transferProcessorMaxPollRPS` times a second (20 by default). Every
 * workflow task goes through that reader, so on the dev server each one waited 0–50 ms for the
 * next load (25 ms on average: the server's own task_latency_load metric), whatever the load:
 * at concurrency 1 an order of six workflow tasks took 300 ms, and a no-op workflow was no
 * faster than the saga, because each step's time was quantized to the reader's 50 ms tick. A
 * cluster spreads workflows over many shards, each with its own reader; letting the one shard
 * load as often as tasks arrive makes the dev server's latency that of the work, not of the tick.
 */
export const DEV_SERVER_DYNAMIC_CONFIG: readonly string[] = [
  '--dynamic-config-value',
  'history.transferProcessorMaxPollRPS=1000',
  // A retired worker build's drainage (npm run deploy -- drained) is rechecked every second, and
  // trusts visibility after 5 s, instead of after 3 minutes each: one SQLite server has no lag to allow for.
  '--dynamic-config-value',
  'matching.wv.VersionDrainageStatusRefreshInterval="1s"',
  '--dynamic-config-value',
  'matching.wv.VersionDrainageStatusVisibilityGracePeriod="5s"',
];

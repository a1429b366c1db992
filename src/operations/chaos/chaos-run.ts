// The chaos run (npm run chaos, and the soak's core): concurrent orders through worker processes
// while Stripe, worker, Postgres and reset faults strike, then a check of invariants I1–I9.
import { dataConverterFor } from '../../platform/temporal/payload-encryption/data-converter.js';
import { loadPayloadEncryptionSettings } from '../../platform/temporal/payload-encryption/settings.js';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import type pg from 'pg';
import { ActivityId } from '../../domain/activity-ids.js';
import { workflowIdForOrder, type OrderInput } from '../../domain/order-input.js';
import { setStock } from '../../orders/stock.js';
import { checkInvariants, type Violation } from '../reconcile/invariant-checker.js';
import { startOrder } from '../../saga-client/start-order.js';
import { seededRandom, startStripeEmulator } from '@order-payments/stripe-emulator';
import { createStripeClient } from '../../money/stripe/client.js';
import { writeWorkflowBundles } from '../../platform/temporal/bundle-workflows.js';
import { untilActivityPending } from '../../platform/temporal/pending-activity.js';
import { terminateOneWorkerBackend } from './backend-terminator.js';
import { startDevServer } from './dev-server.js';
import { buildOrderMix, type ChaosOrder, type OrderIntent } from './order-mix.js';
import { waitForEnding, type Ending } from './order-endings.js';
import { countRetries, type RetryCounts } from './retry-counts.js';
import { installStripeFaults, stripeFaultCounts, type StripeFaultCounts } from './stripe-faults.js';
import { createThrowawayDatabase } from './throwaway-database.js';
import { paymentOutcomeUpdate, type orderPaymentSaga } from '../../workflows/index.js';
import { WorkerFleet, type FleetCounts, type WorkerCode } from './worker-fleet.js';
import { resetWorkflow, type ResetOutcome, type ResetType } from './workflow-reset.js';

const STRIPE_KEY = 'sk_test_order_payments_chaos';
const NAMESPACE = 'default';
const TERMINAL = new Set(['completed', 'declined', 'compensated', 'needs_review']);
/** Orders per `temporal workflow reset`. */
const ORDERS_PER_RESET = 50;
const START_CONCURRENCY = 32;

export interface ChaosOptions {
  orders: number;
  /** How long faults are injected, from the first order on. */
  durationSeconds: number;
  seed: number;
  /**
   * How long after the faults stop every order must have ended. A SIGKILLed worker's activity
   * is retried once its heartbeat timeout (10 s) has passed, after a backoff of up to 30 s; the
   * default, 150 s, also covers a start-to-close timeout (60 s for the charge) with a margin.
   */
  drainSeconds?: number;
  workers?: number;
  /** A running Temporal server to use instead of starting a dev server. */
  temporal?: { address: string; cli: string } | undefined;
  /** A workflow bundle to run instead of bundling the workflows here. */
  workflowBundlePath?: string | undefined;
  /** Keep the database and the worker logs afterwards. */
  keep?: boolean;
  say?: (line: string) => void;
  /** Orders offered per second, at a steady pace. Default: all at once, 32 starts at a time. */
  ratePerSecond?: number | undefined;
  /** The pause between worker kills, [min, max] ms. Default 2.5 to 5 s. */
  killEveryMs?: [number, number] | undefined;
  /** Slots whose worker is never killed: a soak keeps one long-lived worker to watch its memory. */
  spareSlots?: number[] | undefined;
  /** More environment for the workers (a soak's short retention horizons). */
  workerEnv?: Record<string, string> | undefined;
  /** The code the workers run: `source` (tsx, the default) or `build` (dist/ through the production launcher; build it first). */
  workerCode?: WorkerCode | undefined;
  /** Names the database, the task queue and the log directory. Default chaos. */
  label?: string | undefined;
  /**
   * Called once the workers are up; the first order follows at once, and the faults last
   * `durationSeconds` from it. What it returns is stopped once
   * every order has ended (or the drain ran out), before the workers stop and the check runs.
   */
  onRunning?: ((run: ChaosRunContext) => Promise<{ stop(): Promise<void> }>) | undefined;
}

/** What a caller of runChaos sees of a run in progress (a soak samples it, and adds services). */
export interface ChaosRunContext {
  database: { name: string; url: string; pool: pg.Pool };
  temporal: { address: string; client: Client };
  taskQueue: string;
  logDir: string;
  fleet: WorkerFleet;
  orders: readonly ChaosOrder[];
  /** Orders whose workflow was started, and those that ended, so far. */
  started: ReadonlySet<string>;
  endings: ReadonlyMap<string, Ending>;
}

export interface ChaosReport {
  options: { orders: number; durationSeconds: number; drainSeconds: number; seed: number; workers: number };
  /** Seconds from the first order to the last ending, and for the whole run. */
  seconds: { orders: number; total: number };
  outcomes: Record<string, number>;
  /** Where orders of each intent ended. */
  outcomesByIntent: Record<OrderIntent, Record<string, number>>;
  unfinished: { orderId: string; status: string }[];
  faults: StripeFaultCounts & {
    workerKills: number;
    backendTerminations: number;
    resets: number;
    resetsPlanned: number;
    resetsFailed: number;
  };
  resets: ResetOutcome[];
  retries: RetryCounts;
  /** Answers given again under a key: by Stripe's saved response, or by our own records with no Stripe call. */
  replays: {
    servedByStripe: number;
    servedByPostgres: { authorizations: number; captures: number; voids: number; refunds: number };
  };
  /** How the orders' money ended at Stripe, as the reconciliation counted it. */
  money: { captured: number; voided: number; refunded: number };
  stripeRequests: number;
  workers: Pick<FleetCounts, 'started' | 'unexpectedExits' | 'exits'>;
  violations: Violation[];
  logDir: string | null;
  databaseName: string;
  ok: boolean;
}

/**
 * Runs `orders` concurrent orders through two worker processes while faults strike everywhere
 * (Stripe drops, 500s, 429s and latency; workers SIGKILLed; Postgres backends terminated;
 * workflows reset mid-flight), waits for every order to end, then checks I1–I9.
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const say = options.say ?? (() => undefined);
  const drainSeconds = options.drainSeconds ?? 150;
  const workerCount = options.workers ?? 2;
  const tag = randomBytes(3).toString('hex');
  // One generator per concern, so the order mix and each fault's choices follow from the seed
  // whatever the timing interleaves.
  const randomFor = (stream: number) => seededRandom(options.seed * 7919 + stream);
  const runStarted = Date.now();
  const cleanups: (() => Promise<unknown>)[] = [];
  const label = options.label ?? 'chaos';
  const logDir = await mkdtemp(path.join(os.tmpdir(), `order-payments-${label}-${tag}-`));
  let keepLogs = options.keep ?? false;

  try {
    say('starting Temporal, a throwaway database and the Stripe emulator');
    const [temporal, db, emulator] = await Promise.all([
      connectTemporal(options.temporal).then((value) => (cleanups.push(value.stop), value)),
      createThrowawayDatabase({ label }).then((value) => (cleanups.push(() => (options.keep ? value.pool.end() : value.drop())), value)),
      startStripeEmulator({ port: 0 }).then((value) => (cleanups.push(() => value.close()), value)),
    ]);
    // The bundle a production worker loads with tracing off, as the fleet's workers run untraced.
    const bundlePath = options.workflowBundlePath ?? (await writeWorkflowBundles(path.join(logDir, 'workflow-bundles'))).untraced;

    const mix = buildOrderMix(options.orders, tag, randomFor(1));
    for (const { sku, available } of mix.stock) await setStock(db.pool, sku, available);

    const taskQueue = `${label}-${tag}`;
    const fleet = new WorkerFleet(
      workerCount,
      {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? os.tmpdir(),
        DATABASE_URL: db.url,
        DATABASE_POOL_SIZE: '5',
        STRIPE_SECRET_KEY: STRIPE_KEY,
        STRIPE_API_BASE: emulator.url,
        TEMPORAL_ADDRESS: temporal.address,
        TEMPORAL_NAMESPACE: NAMESPACE,
        TEMPORAL_TASK_QUEUE: taskQueue,
        WORKFLOW_BUNDLE_PATH: bundlePath,
        // Every worker of the fleet is one build of the run's own deployment, current from its first start.
        WORKER_DEPLOYMENT_NAME: taskQueue,
        WORKER_ROLLOUT: 'auto',
        LOG_LEVEL: 'info',
        ...options.workerEnv,
      },
      logDir,
      options.workerCode,
    );
    cleanups.push(() => fleet.stop());
    say(`starting ${workerCount} worker processes (logs in ${logDir})`);
    await fleet.start();

    installStripeFaults(emulator, options.seed);
    const endings = new Map<string, Ending>();
    const started = new Set<string>();
    const context: ChaosRunContext = {
      database: { name: db.name, url: db.url, pool: db.pool },
      temporal: { address: temporal.address, client: temporal.client },
      taskQueue,
      logDir,
      fleet,
      orders: mix.orders,
      started,
      endings,
    };
    const alongside = options.onRunning ? await options.onRunning(context) : null;
    if (alongside) cleanups.push(() => alongside.stop());
    const ordersStarted = Date.now();
    const faultsEnd = ordersStarted + options.durationSeconds * 1000;
    const deadline = faultsEnd + drainSeconds * 1000;
    say(`${options.orders} orders; faults for ${options.durationSeconds} s, every order must end within ${drainSeconds} s after`);

    // When the last order ended (the run itself lasts at least as long as the faults); null
    // while some order has not.
    let lastEnding: number | null = null;
    const waiters = startAll(mix.orders, temporal.client, taskQueue, started, endings, options.ratePerSecond).then(() => {
      lastEnding = Date.now();
    });
    const ordersEnded = () => lastEnding !== null;

    const resetsPlanned = Math.floor(options.orders / ORDERS_PER_RESET);
    const killRandom = randomFor(2);
    const spare = new Set(options.spareSlots ?? []);
    const terminateRandom = randomFor(3);
    const faultLoops = Promise.all([
      everyFewSeconds(faultsEnd, options.killEveryMs ?? [2_500, 5_000], killRandom, () => {
        const ready = fleet.readySlots().filter((slot) => !spare.has(slot));
        const slot = ready[Math.floor(killRandom() * ready.length)];
        if (slot !== undefined) fleet.killAndRestart(slot);
        return Promise.resolve();
      }),
      (async () => {
        let terminated = 0;
        const terminateOne = async () => {
          if (await terminateOneWorkerBackend(db.pool, db.name, terminateRandom).catch(() => false)) terminated += 1;
        };
        await everyFewSeconds(faultsEnd, [1_000, 3_000], terminateRandom, terminateOne);
        // On a loaded machine the window can pass while no worker holds a connection (each one
        // restarting after a kill): keep trying while orders run, so every run has the fault.
        while (terminated === 0 && !ordersEnded() && Date.now() < deadline) {
          await sleep(1_000);
          await terminateOne();
        }
        return terminated;
      })(),
      runResets({
        count: resetsPlanned,
        deadline,
        random: randomFor(4),
        orders: mix.orders,
        started,
        endings,
        client: temporal.client,
        reset: (workflowId, type) => resetWorkflow({ cli: temporal.cli, address: temporal.address, namespace: NAMESPACE, workflowId, type }),
      }),
    ]);

    const [, backendTerminations, resets] = await faultLoops;
    say('faults stopped; waiting for every order to end');
    await fleet.allReady().catch((error: unknown) => {
      say(String(error));
    });
    await untilDeadline(waiters, deadline);
    // A reset can land on a run that had just returned: its new run is still going.
    if (await followRestarted(temporal.client, mix.orders, endings, deadline)) lastEnding = Date.now();
    const ordersSeconds = ((lastEnding ?? Date.now()) - ordersStarted) / 1000;
    await alongside?.stop();

    const stripeFaults = stripeFaultCounts(emulator);
    emulator.clearFaults();
    const counters = emulator.counters();
    await fleet.stop();
    const fleetCounts = fleet.counts();

    say('checking invariants I1–I9');
    const orderIds = mix.orders.map(({ order }) => order.orderId);
    const stripe = createStripeClient({ secretKey: STRIPE_KEY, apiBase: emulator.url, maxNetworkRetries: 2 });
    const [report, statuses, retries] = await Promise.all([
      checkInvariants({ db: db.pool, stripe, orderIds }),
      db.pool.query<{ order_id: string; status: string }>('select order_id, status from orders where order_id = any($1)', [orderIds]),
      countRetries(temporal.client, db.pool, orderIds.map(workflowIdForOrder)),
    ]);

    const statusOf = new Map(statuses.rows.map((row) => [row.order_id, row.status]));
    const outcomes: Record<string, number> = {};
    const outcomesByIntent: ChaosReport['outcomesByIntent'] = { success: {}, decline: {}, scarce: {}, cancel: {} };
    const unfinished: ChaosReport['unfinished'] = [];
    for (const { order, intent } of mix.orders) {
      const ending = endings.get(order.orderId);
      const status = statusOf.get(order.orderId) ?? 'never recorded';
      // Cancelled before it recorded the order: nothing began, so nothing is owed or undone.
      const cancelledUnbegun = ending?.kind === 'closed' && ending.status === 'CANCELLED' && !statusOf.has(order.orderId);
      const outcome = cancelledUnbegun ? 'cancelled before it began' : ending && TERMINAL.has(status) ? status : 'unfinished';
      if (outcome === 'unfinished') {
        const run = !ending ? 'workflow still running' : ending.kind === 'returned' ? `workflow returned ${ending.status}` : `workflow ${ending.status}: ${ending.message}`;
        unfinished.push({ orderId: order.orderId, status: `${status}; ${run}` });
      }
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      outcomesByIntent[intent][outcome] = (outcomesByIntent[intent][outcome] ?? 0) + 1;
    }

    const ok = report.violations.length === 0 && unfinished.length === 0;
    // A worker that died on its own is a finding even when every order survived it: keep its log.
    keepLogs ||= !ok || fleetCounts.unexpectedExits > 0;
    return {
      options: { orders: options.orders, durationSeconds: options.durationSeconds, drainSeconds, seed: options.seed, workers: workerCount },
      seconds: { orders: round1(ordersSeconds), total: round1((Date.now() - runStarted) / 1000) },
      outcomes,
      outcomesByIntent,
      unfinished,
      faults: {
        ...stripeFaults,
        workerKills: fleetCounts.killed,
        backendTerminations,
        resets: resets.filter((reset) => reset.ok).length,
        resetsPlanned,
        resetsFailed: resets.filter((reset) => !reset.ok).length,
      },
      resets,
      retries,
      replays: {
        servedByStripe: counters.replays,
        servedByPostgres: {
          authorizations: fleetCounts.messages.authorizationsAnsweredFromPostgres,
          captures: fleetCounts.messages.capturesAnsweredFromPostgres,
          voids: fleetCounts.messages.voidsAnsweredFromPostgres,
          refunds: fleetCounts.messages.refundsAnsweredFromPostgres,
        },
      },
      money: {
        captured: report.orders.reduce((sum, order) => sum + order.charges, 0),
        voided: report.orders.reduce((sum, order) => sum + order.voids, 0),
        refunded: report.orders.reduce((sum, order) => sum + order.refunds, 0),
      },
      stripeRequests: counters.requests,
      workers: { started: fleetCounts.started, unexpectedExits: fleetCounts.unexpectedExits, exits: fleetCounts.exits },
      violations: report.violations,
      logDir: keepLogs ? logDir : null,
      databaseName: db.name,
      ok,
    };
  } catch (error) {
    keepLogs = true;
    throw error;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    if (!keepLogs) await rm(logDir, { recursive: true, force: true });
  }
}

async function connectTemporal(existing: ChaosOptions['temporal']): Promise<{ address: string; cli: string; client: Client; stop: () => Promise<void> }> {
  if (!existing) {
    const server = await startDevServer();
    return { address: server.address, cli: server.cli, client: server.client, stop: () => server.stop() };
  }
  const connection = await Connection.connect({ address: existing.address });
  return { ...existing, client: new Client({ connection, namespace: NAMESPACE, dataConverter: dataConverterFor(loadPayloadEncryptionSettings()) }), stop: () => connection.close() };
}

/**
 * Starts every order through the starter, a few at a time (or, given a rate, the k-th no sooner
 * than k/rate s after the first), and waits for each to end. The starter is idempotent, so a
 * start that fails on a transient error is simply tried again.
 */
function startAll(
  orders: ChaosOrder[],
  client: Client,
  taskQueue: string,
  started: Set<string>,
  endings: Map<string, Ending>,
  ratePerSecond?: number,
): Promise<void> {
  const queue = [...orders];
  const waits: Promise<void>[] = [];
  const first = Date.now();
  let offered = 0;
  const starter = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const { order } = next;
      const due = ratePerSecond === undefined ? 0 : first + (offered++ * 1000) / ratePerSecond;
      if (due > Date.now()) await sleep(due - Date.now());
      for (let attempt = 1; attempt <= 5; attempt++) {
        try {
          const { workflowId, handle } = await startOrder(client, taskQueue, order);
          started.add(order.orderId);
          if (next.cancelAt !== undefined) void cancelAt(handle, order, next.cancelAt);
          waits.push(
            waitForEnding(client, workflowId).then(
              (ending) => void endings.set(order.orderId, ending),
              () => undefined,
            ),
          );
          break;
        } catch {
          await sleep(1_000 * attempt);
        }
      }
    }
  };
  return Promise.all(Array.from({ length: START_CONCURRENCY }, starter)).then(async () => {
    await Promise.all(waits);
  });
}

/**
 * Cancels an order's workflow as a customer would: while its authorization is in flight (seen
 * in the workflow's pending activities), or `ms` after its hold is placed (learnt from the saga's
 * paymentOutcome update), so the run voids a hold or refunds a capture. A cancel that finds the
 * run over is a no-op.
 */
async function cancelAt(handle: WorkflowHandle<typeof orderPaymentSaga>, order: OrderInput, when: 'authorizing' | number): Promise<void> {
  if (when === 'authorizing') {
    await untilActivityPending(handle, (activity) => activity.activityId === ActivityId.authorizePayment, { intervalMs: 50, maxPolls: 1200 }).catch(() => {
      // The run could not be described (it may be gone): cancel anyway, which is then a no-op.
    });
  } else {
    try {
      await handle.executeUpdate(paymentOutcomeUpdate, { args: [order], updateId: 'chaos-cancel-after-hold' });
    } catch {
      // The run ended (or its outcome failed) before a hold: cancel anyway, which is then a no-op.
    }
    await sleep(when);
  }
  for (let attempt = 1; attempt <= 5; attempt++) {
    try {
      await handle.cancel();
      return;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return;
      await sleep(500 * attempt);
    }
  }
}

/** Runs `act` at seeded intervals within `[min, max]` ms until `until`. */
async function everyFewSeconds(until: number, [min, max]: [number, number], random: () => number, act: () => Promise<void>): Promise<void> {
  for (;;) {
    await sleep(min + random() * (max - min));
    if (Date.now() >= until) return;
    await act();
  }
}

/**
 * One reset for every ORDERS_PER_RESET orders, paced by the orders rather than the clock: the
 * k-th fires at a seeded point while the k-th batch of 50 orders ends. Paced by the clock, resets
 * planned late in the fault window found nothing left running whenever the orders were fast.
 */
async function runResets(options: {
  count: number;
  deadline: number;
  random: () => number;
  orders: ChaosOrder[];
  started: Set<string>;
  endings: Map<string, Ending>;
  client: Client;
  reset: (workflowId: string, type: ResetType) => Promise<ResetOutcome>;
}): Promise<ResetOutcome[]> {
  const { random } = options;
  const thresholds = Array.from({ length: options.count }, (_, k) => Math.floor((k + 0.8 * random()) * ORDERS_PER_RESET));
  const outcomes: ResetOutcome[] = [];
  for (const [index, threshold] of thresholds.entries()) {
    while (options.endings.size < threshold && Date.now() < options.deadline) await sleep(200);
    const type: ResetType = index % 2 === 0 ? 'FirstWorkflowTask' : 'LastWorkflowTask';
    const candidates = options.orders.filter(({ order }) => options.started.has(order.orderId) && !options.endings.has(order.orderId));
    // Tried in a seeded order until one is reset: a reset of an ended run would start it again.
    for (let attempt = 0; attempt < 20 && candidates.length > 0; attempt++) {
      const pick = candidates.splice(Math.floor(random() * candidates.length), 1)[0];
      if (!pick) break;
      const workflowId = workflowIdForOrder(pick.order.orderId);
      if (!(await isResettable(options.client, workflowId))) continue;
      // A run can end between the check and the reset, and the server then refuses it: that
      // refusal is recorded, and the next candidate is tried.
      const outcome = await options.reset(workflowId, type);
      outcomes.push(outcome);
      if (outcome.ok) break;
    }
  }
  return outcomes;
}

/**
 * Still running, with a completed workflow task to reset to. A first task handed to a worker
 * that was then killed times out, and until a later one completes the server refuses the reset
 * ('Workflow task finish ID must be > 1').
 */
async function isResettable(client: Client, workflowId: string): Promise<boolean> {
  const handle = client.workflow.getHandle(workflowId);
  try {
    const description = await handle.describe();
    if (description.status.name !== 'RUNNING') return false;
    const history = await handle.fetchHistory();
    return (history.events ?? []).some((event) => event.workflowTaskCompletedEventAttributes);
  } catch {
    return false;
  }
}

async function untilDeadline(work: Promise<unknown>, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))))]);
  clearTimeout(timer);
}

/** Waits for the runs a reset restarted after they had ended; true when there were any. */
async function followRestarted(client: Client, orders: ChaosOrder[], endings: Map<string, Ending>, deadline: number): Promise<boolean> {
  let followed = false;
  for (const { order } of orders) {
    if (!endings.has(order.orderId)) continue;
    const workflowId = workflowIdForOrder(order.orderId);
    const latest = await client.workflow.getHandle(workflowId).describe();
    if (latest.status.name !== 'RUNNING') continue;
    endings.delete(order.orderId);
    followed = true;
    await untilDeadline(waitForEnding(client, workflowId).then((ending) => void endings.set(order.orderId, ending)), deadline);
  }
  return followed;
}

const round1 = (value: number) => Math.round(value * 10) / 10;

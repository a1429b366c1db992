// The payment-outcome benchmark: time from POST /v1/orders to knowing the payment's outcome through
// the real API, Update-with-Start against polling, paced and back to back.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { pino } from 'pino';
import type { Pool } from 'pg';
import { createApiKey } from '../src/api/auth/api-keys.js';
import { buildApiServer } from '../src/api/server.js';
import { DEFAULT_API_IDEMPOTENCY } from '../src/api/idempotency/settings.js';
import { percentile, runClosedLoop, type LoadResult } from './closed-loop.js';
import { combineCpu, cpuBetween, type CpuBreakdown, type CpuSnapshot } from './machine-cpu.js';

/** Statuses at which GET /v1/orders/:id has not yet learnt the payment's outcome. */
const UNDECIDED = new Set(['pending', 'reserved']);

export interface OutcomeLatency {
  completed: number;
  failed: number;
  p50Ms: number;
  p99Ms: number;
  /** The whole machine's CPU per checkout while these ran (the one call's, when measured). */
  machineCpu?: CpuBreakdown;
  /** How many HTTP requests a checkout made per order to learn the outcome. */
  requestsPerOrder: number;
}

/** One way of loading the API: both ways of learning the outcome under the same offered load. */
export interface OutcomeComparison {
  /** Checkouts started per second by all clients together; null when back to back (as fast as answered). */
  offeredPerSecond: number | null;
  updateWithStart: OutcomeLatency;
  startThenPoll: OutcomeLatency;
  /** startThenPoll p50 over updateWithStart p50: how many times sooner the one call knows. */
  p50Speedup: number;
}

export interface PaymentOutcomeBench {
  concurrency: number;
  /** Checkouts each way, in each load. */
  orders: number;
  pollIntervalMs: number;
  /**
   * The figure the target is for: each client paces itself (a shopper does not check out again
   * the moment the last checkout answered), so the offered load stays at `offeredPerSecond`
   * (bench.ts: 4 checkouts a second).
   */
  paced: OutcomeComparison;
  /**
   * The same clients back to back, which saturates the worker: by Little's law each way then
   * takes concurrency / throughput, so this shows the machine's queue, not the answer's latency.
   */
  backToBack: OutcomeComparison;
}

/**
 * Time from a checkout's POST /v1/orders to knowing whether the payment went through, through
 * the real API in front of the running saga worker, two ways in alternating rounds: the one call
 * (Update-with-Start answers 201 with the outcome), and the way it was before (the API answers
 * pending at once, the checkout polls GET /v1/orders/:id every `pollIntervalMs`). Measured twice:
 * with clients that pace themselves below the machine's capacity (the target's figure), and back
 * to back (the saturated machine, shown for what it explains).
 */
/** The API tenant the bench's checkouts belong to: bench.ts stocks its SKUs for it (stock is per tenant). */
export const PAYMENT_OUTCOME_TENANT = 'bench-outcome';

export async function measurePaymentOutcome(options: {
  db: Pool;
  client: Client;
  taskQueue: string;
  skus: number;
  concurrency: number;
  orders: number;
  rounds: number;
  pollIntervalMs: number;
  /** The paced load's checkouts per second, all clients together. */
  offeredPerSecond: number;
  /** Reads every process's CPU (machine-cpu.ts): given, the one call's CPU per checkout is measured beside its latency. */
  cpuSnapshot?: () => Promise<CpuSnapshot>;
}): Promise<PaymentOutcomeBench> {
  const common = {
    db: options.db,
    signalPaymentEvent: () => Promise.resolve('no-workflow' as const),
    stripeWebhook: { secrets: ['whsec_bench'], toleranceSeconds: 300 },
    logger: pino({ level: 'silent' }),
    temporal: { client: options.client, taskQueue: options.taskQueue },
    apiIdempotency: DEFAULT_API_IDEMPOTENCY,
  };
  // The same service twice: waiting for the outcome, and answering pending at once (as before).
  const oneCall = await buildApiServer({ ...common, outcomeWaitMs: 10_000 });
  const answersPending = await buildApiServer({ ...common, outcomeWaitMs: 0 });
  const { key } = await createApiKey(options.db, PAYMENT_OUTCOME_TENANT);
  try {
    const [oneCallUrl, pendingUrl] = await Promise.all([listen(oneCall), listen(answersPending)]);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const body = (index: number) =>
      JSON.stringify({ customerId: 'cust-bench', amount: 1999, currency: 'usd', paymentMethod: 'pm_card_visa', sku: `bench-sku-${index % options.skus}`, quantity: 1 });
    const requests = { updateWithStart: 0, startThenPoll: 0 };

    const viaUpdate = async (index: number) => {
      requests.updateWithStart += 1;
      const response = await fetch(`${oneCallUrl}/v1/orders`, { method: 'POST', headers: { ...headers, 'idempotency-key': randomUUID() }, body: body(index) });
      const answer = (await response.json()) as { status?: string };
      if (response.status !== 201 || answer.status !== 'authorized') throw new Error(`one call answered ${response.status} ${JSON.stringify(answer)}`);
    };
    const viaPoll = async (index: number) => {
      requests.startThenPoll += 1;
      const response = await fetch(`${pendingUrl}/v1/orders`, { method: 'POST', headers: { ...headers, 'idempotency-key': randomUUID() }, body: body(index) });
      const created = (await response.json()) as { id?: string; status?: string };
      if (!created.id) throw new Error(`start answered ${response.status} ${JSON.stringify(created)}`);
      for (;;) {
        await sleep(options.pollIntervalMs);
        requests.startThenPoll += 1;
        const order = (await (await fetch(`${pendingUrl}/v1/orders/${created.id}`, { headers })).json()) as { status?: string };
        if (order.status && !UNDECIDED.has(order.status)) return;
      }
    };

    const summarize = (runs: LoadResult[], requestCount: number): OutcomeLatency => {
      const latencies = runs.flatMap((run) => run.latenciesMs);
      const completed = runs.reduce((sum, run) => sum + run.completed, 0);
      const failed = runs.reduce((sum, run) => sum + run.failed, 0);
      const firstError = runs.find((run) => run.firstError)?.firstError;
      if (failed > 0) throw new Error(`${failed} checkout(s) failed: ${firstError ?? 'unknown'}`);
      return { completed, failed, p50Ms: round(percentile(latencies, 50)), p99Ms: round(percentile(latencies, 99)), requestsPerOrder: round(requestCount / Math.max(1, completed), 2) };
    };
    const chunk = Math.ceil(options.orders / options.rounds);
    const compare = async (offeredPerSecond: number | null): Promise<OutcomeComparison> => {
      requests.updateWithStart = 0;
      requests.startThenPoll = 0;
      const cycleMs = offeredPerSecond === null ? undefined : (options.concurrency * 1000) / offeredPerSecond;
      const samples = { updateWithStart: [] as LoadResult[], startThenPoll: [] as LoadResult[] };
      const oneCallCpu: { cpu: CpuBreakdown; orders: number }[] = [];
      for (let round = 0; round < options.rounds; round++) {
        // Each way goes first every other round, so a change in the machine's load falls on both alike.
        const turn = round % 2 === 0 ? (['updateWithStart', 'startThenPoll'] as const) : (['startThenPoll', 'updateWithStart'] as const);
        for (const way of turn) {
          const before = way === 'updateWithStart' ? await options.cpuSnapshot?.() : undefined;
          const run = await runClosedLoop({ concurrency: options.concurrency, total: chunk, cycleMs, runOne: way === 'updateWithStart' ? viaUpdate : viaPoll });
          if (before && options.cpuSnapshot) oneCallCpu.push({ cpu: cpuBetween(before, await options.cpuSnapshot(), run.completed), orders: run.completed });
          samples[way].push(run);
        }
      }
      const updateWithStart = {
        ...summarize(samples.updateWithStart, requests.updateWithStart),
        ...(oneCallCpu.length > 0 && { machineCpu: combineCpu(oneCallCpu) }),
      };
      const startThenPoll = summarize(samples.startThenPoll, requests.startThenPoll);
      return { offeredPerSecond: offeredPerSecond === null ? null : round(offeredPerSecond, 2), updateWithStart, startThenPoll, p50Speedup: round(startThenPoll.p50Ms / updateWithStart.p50Ms, 2) };
    };
    const paced = await compare(options.offeredPerSecond);
    const backToBack = await compare(null);
    return { concurrency: options.concurrency, orders: chunk * options.rounds, pollIntervalMs: options.pollIntervalMs, paced, backToBack };
  } finally {
    await Promise.all([oneCall.close(), answersPending.close()]);
  }
}

async function listen(app: Awaited<ReturnType<typeof buildApiServer>>): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

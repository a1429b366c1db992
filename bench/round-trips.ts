// What one order costs the Temporal server in the bench's own run, read from the real histories:
// per saga path, and per workload (the saga beside the no-op workflows of its old and new shapes).
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import type { StripeEmulator } from '@order-payments/stripe-emulator';
import { workflowIdForOrder, type OrderInput } from '../src/domain/order-input.js';
import { historyCost, meanHistoryCost, type HistoryCost } from '../src/platform/temporal/history-cost.js';
import { startOrderForPaymentOutcome } from '../src/saga-client/payment-outcome.js';
import { startOrder } from '../src/saga-client/start-order.js';
import type { CpuBreakdown } from './machine-cpu.js';
import { median } from './closed-loop.js';
import { fixed, type LevelResult, type Target, type Workload } from './report.js';

/** The workloads the levels run: the saga and the two no-op references (bench/baseline-workflow.ts). */
export const WORKLOADS: readonly Workload[] = ['baseline', 'baseline-new', 'saga'];

/** Each workload's workflow type, as registered by its worker. */
export const WORKFLOW_TYPE: Record<Workload, string> = {
  baseline: 'baselineSaga',
  'baseline-new': 'newShapeBaselineSaga',
  saga: 'orderPaymentSaga',
};

/** The workflow ID of an order of a workload: the saga's is the production one. */
export function workflowIdOf(workload: Workload, orderId: string): string {
  return workload === 'saga' ? workflowIdForOrder(orderId) : `${workload}-${orderId}`;
}

/** The saga's paths, each run once on the bench's saga worker after the levels. */
export const SAGA_PATHS = ['completed', 'completed, one call', 'declined', 'out of stock', 'cancelled before capture', 'cancelled after capture'] as const;
export type SagaPath = (typeof SAGA_PATHS)[number];

export interface RoundTrips {
  /** One order of each path, read from its history. */
  paths: Record<SagaPath, HistoryCost>;
  /** The mean over the orders sampled from the level at 64, per workload. */
  workloads: Record<Workload, HistoryCost & { sampled: number }>;
  /** Saga throughput over each reference's at each level: the median of the rounds' ratios, and the rounds'. */
  ratios: { concurrency: number; overOldShape: { median: number; rounds: number[] }; overNewShape: { median: number; rounds: number[] } }[];
}

/**
 * Runs one order of each saga path on the saga worker's task queue and reads what its history
 * cost. The cancels are made while Stripe holds the step's request (an emulator latency fault),
 * as the replay fixtures are recorded.
 */
export async function measurePathCosts(options: { client: Client; taskQueue: string; emulator: StripeEmulator; label: string; sku: string }): Promise<Record<SagaPath, HistoryCost>> {
  const { client, taskQueue, emulator } = options;
  const order = (path: string, overrides: Partial<OrderInput> = {}): OrderInput => ({
    orderId: `${options.label}-${path.replace(/[^a-z]+/g, '-')}`,
    tenantId: 'default',
    customerId: 'cust-bench',
    amount: 2500,
    currency: 'usd',
    paymentMethod: 'pm_card_visa',
    sku: options.sku,
    quantity: 1,
    ...overrides,
  });
  const plain = async (input: OrderInput): Promise<HistoryCost> => {
    const { handle } = await startOrder(client, taskQueue, input);
    await handle.result();
    return historyCost(await handle.fetchHistory());
  };
  const cancelledDuring = async (input: OrderInput, stripePath: string): Promise<HistoryCost> => {
    const before = emulator.counters().faults.latency;
    emulator.addFault({ kind: 'latency', method: 'POST', path: stripePath, orderId: input.orderId, latencyMs: 1_500 });
    const { handle } = await startOrder(client, taskQueue, input);
    for (let waited = 0; emulator.counters().faults.latency === before; waited += 10) {
      if (waited > 30_000) throw new Error(`the ${input.orderId} request to ${stripePath} never reached the emulator`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await handle.cancel();
    try {
      await handle.result();
      throw new Error(`order ${input.orderId} returned; it should have ended cancelled`);
    } catch (error) {
      if (!(error instanceof WorkflowFailedError && error.cause instanceof CancelledFailure)) throw error;
    }
    return historyCost(await handle.fetchHistory());
  };
  const oneCall = async (input: OrderInput): Promise<HistoryCost> => {
    const answered = await startOrderForPaymentOutcome(client, taskQueue, input, { updateId: randomUUID(), waitMs: 30_000 });
    await answered.handle.result();
    return historyCost(await answered.handle.fetchHistory());
  };
  return {
    completed: await plain(order('completed')),
    'completed, one call': await oneCall(order('one-call')),
    declined: await plain(order('declined', { paymentMethod: 'pm_card_visa_chargeDeclinedInsufficientFunds' })),
    // A SKU nobody stocks: the reservation fails before Stripe is called, as for too few units.
    'out of stock': await plain(order('out-of-stock', { sku: `${options.sku}-unstocked` })),
    'cancelled before capture': await cancelledDuring(order('cancel-before'), '/v1/payment_intents'),
    'cancelled after capture': await cancelledDuring(order('cancel-after'), '/v1/payment_intents/:id/capture'),
  };
}

/** The mean cost of up to `sample` orders of each workload, by their workflow IDs. */
export async function measureWorkloadCosts(
  client: Client,
  orderIds: Record<Workload, string[]>,
  sample: number,
): Promise<Record<Workload, HistoryCost & { sampled: number }>> {
  const entries = await Promise.all(
    WORKLOADS.map(async (workload) => {
      const ids = orderIds[workload].slice(0, sample);
      const costs = await Promise.all(ids.map(async (orderId) => historyCost(await client.workflow.getHandle(workflowIdOf(workload, orderId)).fetchHistory())));
      return [workload, { ...meanHistoryCost(costs), sampled: costs.length }] as const;
    }),
  );
  return Object.fromEntries(entries) as Record<Workload, HistoryCost & { sampled: number }>;
}

/** The saga's throughput over each reference's, per level, round by round (they ran one after the other). */
export function throughputRatios(levels: readonly LevelResult[]): RoundTrips['ratios'] {
  const at = (workload: Workload, concurrency: number) => levels.find((level) => level.workload === workload && level.concurrency === concurrency);
  return levels
    .filter((level) => level.workload === 'saga')
    .flatMap((saga) => {
      const old = at('baseline', saga.concurrency);
      const fresh = at('baseline-new', saga.concurrency);
      if (!old || !fresh) return [];
      const over = (reference: LevelResult) => {
        const rounds = saga.roundsOrdersPerSecond.map((rate, index) => round(rate / (reference.roundsOrdersPerSecond[index] ?? Number.NaN), 3));
        return { median: round(median(rounds), 3), rounds };
      };
      return [{ concurrency: saga.concurrency, overOldShape: over(old), overNewShape: over(fresh) }];
    });
}

/** The targets for the cost per order, read from this run. */
export function roundTripTargets(roundTrips: RoundTrips, levels: readonly LevelResult[], checkout: { offeredPerSecond: number | null; p50Ms: number; p99Ms: number; machineCpu?: CpuBreakdown }): Target[] {
  const completed = [roundTrips.paths.completed, roundTrips.paths['completed, one call']];
  const at64 = roundTrips.ratios.find((entry) => entry.concurrency === 64);
  const cpu = (workload: Workload) => fixed(levels.find((level) => level.workload === workload && level.concurrency === 64)?.machineCpu.totalMsPerOrder);
  const rounds = (entry: { rounds: number[] }) => entry.rounds.map((ratio) => ratio.toFixed(2)).join('/');
  return [
    {
      name: 'a completed order costs the Temporal server',
      goal: '≤ 3 workflow tasks and ≤ 24 history events',
      measured: `plain start ${describeCost(roundTrips.paths.completed)}; one-call checkout ${describeCost(roundTrips.paths['completed, one call'])}`,
      met: completed.every((cost) => cost.workflowTasks <= 3 && cost.events <= 24),
    },
    {
      name: 'saga throughput at 64 vs a no-op workflow of the old shape',
      goal: '≥ 1.4× (median of the rounds)',
      measured: at64 ? `${at64.overOldShape.median.toFixed(2)}× (rounds ${rounds(at64.overOldShape)}; machine CPU per order ${cpu('saga')} vs ${cpu('baseline')} ms)` : 'not measured',
      met: (at64?.overOldShape.median ?? 0) >= 1.4,
    },
    {
      name: 'saga throughput at 64 vs a no-op workflow of its own new shape',
      goal: '≥ 90% (median of the rounds)',
      measured: at64 ? `${(at64.overNewShape.median * 100).toFixed(0)}% (rounds ${rounds(at64.overNewShape)}; machine CPU per order ${cpu('saga')} vs ${cpu('baseline-new')} ms)` : 'not measured',
      met: (at64?.overNewShape.median ?? 0) >= 0.9,
    },
    {
      name: `one-call checkout at ${checkout.offeredPerSecond ?? '?'} checkouts/s`,
      goal: 'p50 ≤ 100 ms, p99 reported',
      measured: `p50 ${checkout.p50Ms} ms, p99 ${checkout.p99Ms} ms; machine CPU per checkout ${fixed(checkout.machineCpu?.totalMsPerOrder)} ms`,
      met: checkout.p50Ms <= 100,
    },
  ];
}

/** The markdown section the bench prints: per path and per workload, what one order cost. */
export function roundTripsReport(roundTrips: RoundTrips, levels: readonly LevelResult[]): string {
  const row = (name: string, cost: HistoryCost, extra = '') =>
    `| ${name} | ${cost.events} | ${cost.workflowTasks} | ${cost.activityTasks} | ${cost.localActivities} | ${cost.searchAttributeUpserts} | ${cost.timers} |${extra}`;
  const cpu = (workload: Workload) => fixed(levels.find((level) => level.workload === workload && level.concurrency === 64)?.machineCpu.totalMsPerOrder);
  return [
    '',
    '### What one order costs the Temporal server (read from the run\'s histories)',
    '',
    '| saga path | events | workflow tasks | activity tasks | local activities | upserts | timers |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...SAGA_PATHS.map((path) => row(path, roundTrips.paths[path])),
    '',
    '| workload (orders sampled at 64) | events | workflow tasks | activity tasks | local activities | upserts | timers | machine CPU ms/order at 64 |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...WORKLOADS.map((workload) => row(`${workload} (${roundTrips.workloads[workload].sampled})`, roundTrips.workloads[workload], ` ${cpu(workload)} |`)),
    '',
    '| concurrency | saga / old-shape no-op | saga / new-shape no-op |',
    '| ---: | ---: | ---: |',
    ...roundTrips.ratios.map((entry) => `| ${entry.concurrency} | ${entry.overOldShape.median.toFixed(2)}× (${entry.overOldShape.rounds.join('/')}) | ${(entry.overNewShape.median * 100).toFixed(0)}% (${entry.overNewShape.rounds.join('/')}) |`),
    '',
  ].join('\n');
}

function describeCost(cost: HistoryCost): string {
  return `${cost.events} events, ${cost.workflowTasks} workflow tasks, ${cost.activityTasks} activity tasks, ${cost.localActivities} local activities, ${cost.searchAttributeUpserts} upserts, ${cost.timers} timers`;
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

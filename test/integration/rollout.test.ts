/**
 * Failure-matrix row 20: two builds of the worker with different workflow code, rolled out with
 * `npm run deploy` against the dev server. Build A has orders in flight, held at the capture by
 * the emulator's latency fault; build B ramps, becomes current, is rolled back and forward again.
 * Each run finishes on the build that started it, and A reports drained only once its last run
 * has closed. Both workers are separate processes started as an operator starts them.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { OrderInput } from '../../src/domain/order-input.js';
import { BUNDLE_FILES } from '../../src/platform/temporal/bundle-workflows.js';
import { PRELOADED_WORKFLOW_MODULES, WORKFLOWS_PATH } from '../../src/platform/temporal/order-worker.js';
import { workflowBuildIdOf } from '../../src/platform/temporal/worker-deployment.js';
import { ROLLOUT_MEMO_KEY } from '../fixtures/workflows/build-b-marker.js';
import { runCli, type CliResult } from '../support/run-cli.js';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';
import { startWorkerProcess, stopWorkerProcesses } from '../support/worker-process.js';

const MARKER = fileURLToPath(new URL('../fixtures/workflows/build-b-marker.ts', import.meta.url));
const HELD = 3;
const RAMPED = 30;

let harness: SagaHarness;
let scratch: string;
let buildB: { bundlePath: string; buildId: string };

/** Build B: the workflows plus the marker interceptor, prebundled with its build ID beside it, as `npm run build` writes them. */
async function bundleBuildB(dir: string): Promise<{ bundlePath: string; buildId: string }> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    preloadModules: PRELOADED_WORKFLOW_MODULES,
    workflowInterceptorModules: [MARKER],
    logger: new DefaultLogger('WARN'),
  });
  const buildId = workflowBuildIdOf(code);
  const bundlePath = path.join(dir, BUNDLE_FILES.untraced);
  await writeFile(bundlePath, code);
  await writeFile(path.join(dir, BUNDLE_FILES.buildId), `${buildId}\n`);
  return { bundlePath, buildId };
}

function deploy(...args: string[]): Promise<CliResult> {
  return runCli('src/deploy.ts', args, {
    TEMPORAL_ADDRESS: harness.temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    WORKER_DEPLOYMENT_NAME: harness.deployment.deploymentName,
  });
}

async function deployOk(...args: string[]): Promise<string> {
  const result = await deploy(...args);
  expect(result, `npm run deploy -- ${args.join(' ')}`).toMatchObject({ code: 0 });
  return result.stdout;
}

/** The build a run is pinned to, and whether it ran build B's code (the memo B's first command writes). */
async function ranOn(handle: WorkflowHandle): Promise<{ buildId: string | undefined; marked: boolean }> {
  const description = await handle.describe();
  const versioning = description.raw.workflowExecutionInfo?.versioningInfo;
  return { buildId: versioning?.deploymentVersion?.buildId ?? undefined, marked: description.memo?.[ROLLOUT_MEMO_KEY] === 'b' };
}

async function completeOrders(count: number, on: SagaHarness = harness): Promise<{ order: OrderInput; handle: WorkflowHandle }[]> {
  const orders = await Promise.all(Array.from({ length: count }, () => on.newOrder()));
  const started = await Promise.all(orders.map(async (order) => ({ order, handle: (await on.start(order)).handle })));
  for (const { handle } of started) expect(await handle.result()).toMatchObject({ status: 'completed' });
  return started;
}

beforeAll(async () => {
  harness = await startSagaHarness({ worker: false });
  scratch = await mkdtemp(path.join(os.tmpdir(), 'rollout-build-b-'));
  buildB = await bundleBuildB(scratch);
}, 180_000);

afterAll(async () => {
  await stopWorkerProcesses();
  await harness.close();
  await rm(scratch, { recursive: true, force: true });
});

describe('failure matrix row 20: two builds side by side, rolled out with npm run deploy', () => {
  it(
    'A’s runs finish on A after B is made current; a ramp sends a measured share to B; a rollback makes A current; A is drained only once its last run closed',
    async () => {
      const buildA = harness.deployment.buildId;
      expect(buildB.buildId).not.toBe(buildA);
      const allOrders: string[] = [];

      // Build A, a development worker: current as soon as it polls. Three orders held at their capture.
      await startWorkerProcess(harness);
      const held = await Promise.all(Array.from({ length: HELD }, () => harness.newOrder()));
      const faults = held.map((order) =>
        harness.emulator.addFault({ kind: 'latency', latencyMs: 60_000, method: 'POST', path: '/v1/payment_intents/:id/capture', orderId: order.orderId, count: 1_000 }),
      );
      const heldRuns = await Promise.all(held.map(async (order) => (await harness.start(order)).handle));
      allOrders.push(...held.map((order) => order.orderId));
      await vi.waitFor(async () => {
        for (const handle of heldRuns) expect((await handle.query<{ step: string }>('status')).step).toBe('capturing');
      }, { timeout: 60_000, interval: 500 });

      // Build B, as production starts it: polling only, until the operator moves traffic.
      const workerB = await startWorkerProcess(harness, { env: { WORKFLOW_BUNDLE_PATH: buildB.bundlePath, WORKER_ROLLOUT: 'manual' } });
      expect(workerB.output()).toContain(`"buildId":"${buildB.buildId}"`);
      const status = JSON.parse(await deployOk('--json', 'status')) as { current: string; versions: { buildId: string; openPinnedRuns: number }[] };
      expect(status.current).toBe(buildA);
      expect(status.versions.find((version) => version.buildId === buildA)?.openPinnedRuns).toBe(HELD);

      // A ramp: half of new runs to B. Each run finishes on the build that started it.
      await deployOk('ramp', buildB.buildId, '50');
      const ramped = await completeOrders(RAMPED);
      allOrders.push(...ramped.map(({ order }) => order.orderId));
      const builds = await Promise.all(ramped.map(({ handle }) => ranOn(handle)));
      for (const build of builds) expect(build.marked).toBe(build.buildId === buildB.buildId);
      const onB = builds.filter((build) => build.buildId === buildB.buildId).length;
      expect(onB + builds.filter((build) => build.buildId === buildA).length).toBe(RAMPED);
      console.log(`rollout test: the 50% ramp sent ${onB} of ${RAMPED} new runs to build B (${Math.round((100 * onB) / RAMPED)}%)`);
      expect(onB).toBeGreaterThanOrEqual(Math.ceil(RAMPED * 0.15));
      expect(onB).toBeLessThanOrEqual(Math.floor(RAMPED * 0.85));

      // B current: new orders start and finish on B; A keeps its held runs, so it is not drained.
      await deployOk('set-current', buildB.buildId);
      const onCurrentB = await completeOrders(2);
      allOrders.push(...onCurrentB.map(({ order }) => order.orderId));
      for (const { handle } of onCurrentB) expect(await ranOn(handle)).toEqual({ buildId: buildB.buildId, marked: true });
      const draining = await deploy('drained', buildA);
      expect(draining.code).toBe(1);
      expect(draining.stdout).toContain(`still has ${HELD} open pinned run(s)`);

      // Rollback: A current again, new orders on A; then B once more.
      await deployOk('set-current', buildA);
      const rolledBack = await completeOrders(1);
      allOrders.push(...rolledBack.map(({ order }) => order.orderId));
      for (const { handle } of rolledBack) expect(await ranOn(handle)).toEqual({ buildId: buildA, marked: false });
      expect(await deploy('drained', buildA)).toMatchObject({ code: 1, stdout: expect.stringContaining('is the current version') as unknown });
      await deployOk('set-current', buildB.buildId);

      // The held captures go through: each run finishes, on A, with A's code.
      for (const fault of faults) harness.emulator.removeFault(fault.id);
      for (const handle of heldRuns) {
        expect(await handle.result()).toMatchObject({ status: 'completed' });
        expect(await ranOn(handle)).toEqual({ buildId: buildA, marked: false });
      }
      // Only now, with A's last run closed, is A drained.
      await vi.waitFor(async () => {
        const drained = await deploy('drained', buildA);
        expect(drained, drained.stdout).toMatchObject({ code: 0 });
      }, { timeout: 60_000, interval: 1_000 });

      await harness.expectInvariants(allOrders);
    },
    300_000,
  );

  it('a development restart (WORKER_ROLLOUT=auto) with changed workflow code makes the new build current and names the runs left pinned to the old one', async () => {
    const dev = await startSagaHarness({ worker: false });
    try {
      const before = await startWorkerProcess(dev);
      const order = await dev.newOrder();
      const fault = dev.emulator.addFault({ kind: 'latency', latencyMs: 60_000, method: 'POST', path: '/v1/payment_intents/:id/capture', orderId: order.orderId, count: 1_000 });
      const run = (await dev.start(order)).handle;
      await vi.waitFor(async () => {
        expect((await run.query<{ step: string }>('status')).step).toBe('capturing');
      }, { timeout: 60_000, interval: 500 });
      expect(await before.stop()).toEqual({ code: 0, signal: null });

      const after = await startWorkerProcess(dev, { env: { WORKFLOW_BUNDLE_PATH: buildB.bundlePath } });
      expect(after.output()).toContain(`1 run(s) started on build ${dev.deployment.buildId} stay pinned to it`);
      const next = (await completeOrders(1, dev))[0];
      if (!next) throw new Error('no order completed');
      expect(await ranOn(next.handle)).toEqual({ buildId: buildB.buildId, marked: true });

      // The old build's worker back: its run resumes on it, on its own code.
      dev.emulator.removeFault(fault.id);
      await startWorkerProcess(dev);
      expect(await run.result()).toMatchObject({ status: 'completed' });
      expect(await ranOn(run)).toEqual({ buildId: dev.deployment.buildId, marked: false });
    } finally {
      await stopWorkerProcesses();
      await dev.close();
    }
  }, 240_000);

  it('refuses a bad build ID or percentage with one line and exit 2, and an unknown build with exit 3', async () => {
    const badBuild = await deploy('set-current', 'no/such');
    expect(badBuild.code).toBe(2);
    expect(badBuild.stderr.trim().split('\n')).toHaveLength(1);
    expect((await deploy('ramp', harness.deployment.buildId, '150')).code).toBe(2);
    const unknown = await deploy('set-current', 'never-deployed');
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toMatch(/^deploy: the change could not be made: /);
  }, 120_000);
});

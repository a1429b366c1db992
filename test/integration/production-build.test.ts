/**
 * The production build: `npm run build` compiles dist/, its two workflow bundles and their build
 * ID, and `NODE_ENV=production sh scripts/run.sh worker` (the documented production start,
 * started as the bench starts it) is one process, node itself: no npm or shell beside it, no tsx,
 * the worker's memory defaults applied; once its build is made current it completes a saga. The launcher's choices (a missing build, the user's own
 * settings winning, development on tsx) are checked on a scratch copy of it.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startProductionWorker, type ProductionWorker } from '../../bench/production-worker.js';
import { WorkerFleet, workerCommand } from '../../src/operations/chaos/worker-fleet.js';
import { TraceAttribute, type StoredSpan } from '../../src/platform/telemetry/tracing.js';
import { becomeCurrent } from '../../src/operations/deploy/deployment-routing.js';
import { startSagaHarness, STRIPE_TEST_KEY, type SagaHarness } from '../support/saga-harness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LAUNCHER = path.join(ROOT, 'scripts', 'run.sh');

let harness: SagaHarness;
let scratch: string;

beforeAll(async () => {
  harness = await startSagaHarness({ worker: false });
  scratch = await mkdtemp(path.join(os.tmpdir(), 'order-payments-launcher-'));
}, 60_000);
afterAll(async () => {
  await harness.close();
  await rm(scratch, { recursive: true, force: true });
});

describe('the production build', () => {
  it('npm run build writes dist/; NODE_ENV=production sh scripts/run.sh worker is node alone, with the memory defaults, polls as the build of this source, completes a saga once made current, and stops on SIGTERM', async () => {
    const build = await execa('npm', ['run', '--silent', 'build'], { cwd: ROOT, reject: false, all: true });
    expect(build.exitCode, build.all).toBe(0);
    for (const file of ['dist/worker.js', 'dist/api.js', 'dist/outbox-dispatcher.js', 'dist/receipts.js']) {
      await expect(readFile(path.join(ROOT, file), 'utf8')).resolves.not.toHaveLength(0);
    }
    // Two workflow bundles: only the traced one carries the workflow's tracing interceptors, and
    // neither carries OpenTelemetry's own code into the sandbox (each run would evaluate its copy).
    const interceptors = /function importInterceptors\(\) \{[^}]*otel-interceptors\.ts/;
    const traced = await readFile(path.join(ROOT, 'dist', 'workflow-bundle.traced.js'), 'utf8');
    expect(traced).toMatch(interceptors);
    expect(traced).not.toContain('@opentelemetry');
    const untraced = await readFile(path.join(ROOT, 'dist', 'workflow-bundle.js'), 'utf8');
    expect(untraced).toContain('orderPaymentSaga');
    expect(untraced).not.toMatch(interceptors);
    expect(untraced).not.toContain('@opentelemetry');
    // The build ID is the workflow code's: the same from dist/ as from the source the tests bundled.
    const buildId = (await readFile(path.join(ROOT, 'dist', 'workflow-build-id'), 'utf8')).trim();
    expect(buildId).toBe(inject('workflowBuildId'));

    let worker: ProductionWorker | undefined;
    try {
      worker = await startProductionWorker('tuned', {
        temporalAddress: harness.temporalAddress,
        taskQueue: harness.taskQueue,
        databaseUrl: harness.db.url,
        stripeApiBase: harness.emulator.url,
        stripeSecretKey: STRIPE_TEST_KEY,
      });
      // Its first line names its build; in production it takes no traffic until that build is made current.
      expect(worker.output().split('\n')[0]).toContain(`"buildId":"${buildId}"`);
      expect(worker.output()).toContain(`npm run deploy -- set-current ${buildId}`);
      await becomeCurrent(harness.client, { deploymentName: harness.taskQueue, buildId }, 'production-build test');
      const order = await harness.newOrder();
      const started = await harness.start(order);
      expect((await started.handle.result()).status).toBe('completed');
      await harness.expectInvariants([order.orderId]);

      const tree = await worker.tree();
      const commands = tree.map((info) => info.cmdline);
      // One process, the worker itself: the launcher's shell gave its process to node.
      expect(commands, commands.join('\n')).toHaveLength(1);
      expect(commands.filter((command) => /tsx|npm/.test(command))).toEqual([]);
      const node = tree.find((info) => info.cmdline.includes('dist/worker.js'));
      expect(node, commands.join('\n')).toBeDefined();
      expect(node?.cmdline).toMatch(/--max-old-space-size=160 --max-semi-space-size=12 \S*\/dist\/worker\.js$/);
      const environ = (await readFile(`/proc/${String(node?.pid)}/environ`, 'utf8')).split('\0');
      expect(environ).toContain('MALLOC_ARENA_MAX=2');
      expect(environ).toContain('NODE_ENV=production');
      expect(worker.output()).toContain('"workflows":"' + path.join(ROOT, 'dist', 'workflow-bundle.js') + '"');

      // SIGTERM, as a supervisor sends it, is the worker's: a graceful stop, nothing left running.
      const stopped = await worker.stop();
      expect(stopped).toEqual({ code: 0, signal: null, leftBehind: [] });
      expect(worker.output()).toContain('worker stopped');
    } finally {
      await worker?.stop();
    }
  }, 420_000);

  it('with tracing on, the production worker loads the traced bundle: the workflow is in the order\'s trace', async () => {
    // Needs the dist/ the first test built (tests in a file run in order).
    const traceFile = path.join(scratch, 'production-traces.jsonl');
    let worker: ProductionWorker | undefined;
    try {
      worker = await startProductionWorker('tuned', {
        temporalAddress: harness.temporalAddress,
        taskQueue: harness.taskQueue,
        databaseUrl: harness.db.url,
        stripeApiBase: harness.emulator.url,
        stripeSecretKey: STRIPE_TEST_KEY,
        extra: { TRACE_FILE: traceFile },
      });
      expect(worker.output()).toContain('"workflows":"' + path.join(ROOT, 'dist', 'workflow-bundle.traced.js') + '"');
      const order = await harness.newOrder();
      const started = await harness.start(order);
      expect((await started.handle.result()).status).toBe('completed');
      expect(await worker.stop()).toEqual({ code: 0, signal: null, leftBehind: [] });
      const spans = (await readFile(traceFile, 'utf8'))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as StoredSpan);
      const run = spans.find((span) => span.name === 'RunWorkflow:orderPaymentSaga' && span.attributes.runId === started.runId);
      expect(run, spans.map((span) => span.name).join(', ')).toBeDefined();
      const capture = spans.find((span) => span.name === 'RunActivity:capturePayment' && span.attributes[TraceAttribute.orderId] === order.orderId);
      expect(capture?.traceId).toBe(run?.traceId);
    } finally {
      await worker?.stop();
    }
  }, 180_000);

  it("runs the soak's workers from the build with the production memory defaults, accepting the soak-only horizon that NODE_ENV=production refuses", async () => {
    // Needs the dist/ the test above built (tests in a file run in order).
    const logDir = await mkdtemp(path.join(scratch, 'fleet-'));
    const fleet = new WorkerFleet(
      1,
      {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? os.tmpdir(),
        DATABASE_URL: harness.db.serviceUrl('worker'),
        STRIPE_SECRET_KEY: STRIPE_TEST_KEY,
        STRIPE_API_BASE: harness.emulator.url,
        TEMPORAL_ADDRESS: harness.temporalAddress,
        TEMPORAL_TASK_QUEUE: harness.taskQueue,
        WORKER_DEPLOYMENT_NAME: harness.deployment.deploymentName,
        WORKFLOW_BUNDLE_PATH: path.join(ROOT, 'dist', 'workflow-bundle.js'),
        RETENTION_SOAK_HORIZON_SECONDS: '60',
      },
      logDir,
      'build',
    );
    try {
      await fleet.start();
      const [running] = fleet.processes();
      expect(running?.ready).toBe(true);
      // The PID the fleet kills and samples is node itself, on the compiled worker.
      const cmdline = (await readFile(`/proc/${String(running?.pid)}/cmdline`, 'utf8')).split('\0').join(' ');
      expect(cmdline).toMatch(/--max-old-space-size=\d+ --max-semi-space-size=\d+ \S*\/dist\/worker\.js/);
      const environ = (await readFile(`/proc/${String(running?.pid)}/environ`, 'utf8')).split('\0');
      expect(environ).toContain('MALLOC_ARENA_MAX=2');
      expect(environ).not.toContain('NODE_ENV=production');
      expect(workerCommand('build').shown).toBe('RUN_FROM=dist sh scripts/run.sh worker');

      const order = await harness.newOrder();
      const started = await harness.start(order);
      expect((await started.handle.result()).status).toBe('completed');
    } finally {
      await fleet.stop();
    }
  }, 180_000);
});

/** A scratch project with the real launcher and stand-in entry points that report how they were started. */
async function scratchProject(name: string, entries: { dist?: boolean; src?: boolean }): Promise<string> {
  const root = path.join(scratch, name);
  await mkdir(path.join(root, 'scripts'), { recursive: true });
  await copyFile(LAUNCHER, path.join(root, 'scripts', 'run.sh'));
  const report = `console.log(JSON.stringify({ execArgv: process.execArgv, argv: process.argv.slice(2), arenas: process.env.MALLOC_ARENA_MAX ?? null }));\n`;
  if (entries.dist) {
    await mkdir(path.join(root, 'dist'), { recursive: true });
    await writeFile(path.join(root, 'dist', 'worker.js'), report);
  }
  if (entries.src) {
    await mkdir(path.join(root, 'src'), { recursive: true });
    await writeFile(path.join(root, 'src', 'worker.ts'), `const started: string = 'tsx';\nconsole.log(JSON.stringify({ started, loader: process.execArgv.join(' ') }));\n`);
    await symlink(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
  }
  return root;
}

function launch(root: string, env: Record<string, string>, args: string[] = ['worker']) {
  return execa('sh', [path.join(root, 'scripts', 'run.sh'), ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    extendEnv: false,
    reject: false,
  });
}

describe('the launcher (scripts/run.sh)', () => {
  it('in production without a build says to build, in one line, and exits 2; so does development without tsx', async () => {
    const root = await scratchProject('unbuilt', {});
    for (const service of ['worker', 'api', 'outbox-dispatcher', 'receipts']) {
      const result = await launch(root, { NODE_ENV: 'production' }, [service]);
      expect(result.exitCode).toBe(2);
      expect(result.stderr.split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(new RegExp(`^${service}: no production build .*: run npm run build first$`));
    }
    // Development without tsx (npm ci --omit=dev) says how to run the build instead.
    const noTsx = await launch(root, {});
    expect(noTsx.exitCode).toBe(2);
    expect(noTsx.stderr).toBe('worker: tsx is not installed (npm ci installs it); to run the build in dist/, set NODE_ENV=production');
    const unknown = await launch(root, { NODE_ENV: 'production' }, ['workers']);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("unknown service 'workers'");
  });

  it("gives the production worker its memory defaults, each replaced by the user's own NODE_OPTIONS or MALLOC_ARENA_MAX, and passes arguments on", async () => {
    const root = await scratchProject('built', { dist: true });
    const defaults = await launch(root, { NODE_ENV: 'production' }, ['worker', '--flag']);
    expect(JSON.parse(defaults.stdout)).toEqual({ execArgv: ['--max-old-space-size=160', '--max-semi-space-size=12'], argv: ['--flag'], arenas: '2' });

    const own = await launch(root, { NODE_ENV: 'production', NODE_OPTIONS: '--max-old-space-size=512', MALLOC_ARENA_MAX: '8' });
    expect(JSON.parse(own.stdout)).toEqual({ execArgv: ['--max-semi-space-size=12'], argv: [], arenas: '8' });

    const both = await launch(root, { NODE_ENV: 'production', NODE_OPTIONS: '--max_semi_space_size=16 --max-old-space-size=512' });
    expect(JSON.parse(both.stdout)).toEqual({ execArgv: [], argv: [], arenas: '2' });
  });

  it('RUN_FROM=dist runs the build with its memory defaults outside production; RUN_FROM=src runs tsx in production; anything else is one line and exit 2', async () => {
    const built = await scratchProject('run-from-dist', { dist: true });
    const fromDist = await launch(built, { RUN_FROM: 'dist' });
    expect(fromDist.exitCode, fromDist.stderr).toBe(0);
    expect(JSON.parse(fromDist.stdout)).toMatchObject({ execArgv: [expect.stringMatching(/^--max-old-space-size=/), expect.stringMatching(/^--max-semi-space-size=/)], arenas: '2' });

    const source = await scratchProject('run-from-src', { src: true });
    const fromSrc = await launch(source, { NODE_ENV: 'production', RUN_FROM: 'src' });
    expect(fromSrc.exitCode, fromSrc.stderr).toBe(0);
    expect((JSON.parse(fromSrc.stdout) as { started: string }).started).toBe('tsx');

    const wrong = await launch(built, { RUN_FROM: 'build' });
    expect(wrong.exitCode).toBe(2);
    expect(wrong.stderr).toBe("scripts/run.sh: RUN_FROM must be dist or src, got 'build'");
  });

  it('outside production runs the TypeScript source through tsx, with no memory defaults', async () => {
    const root = await scratchProject('development', { src: true });
    const result = await launch(root, {});
    expect(result.exitCode, result.stderr).toBe(0);
    const reported = JSON.parse(result.stdout) as { started: string; loader: string };
    expect(reported.started).toBe('tsx');
    expect(reported.loader).toContain('tsx');
    expect(reported.loader).not.toContain('max-old-space-size');
  });
});

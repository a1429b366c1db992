// `npm run soak`: the chaos run, every fault on, at a steady load for at least --minutes and at
// least --orders (whichever is later), sampled every minute; prints the time series and a verdict
// per target and writes bench/results/soak-<date>-<sha>.json for the README to quote.
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError, Option } from 'commander';
import { execa } from 'execa';
import { ensureTemporalCli, oneLine } from './platform/tools/bootstrap.js';
import { describeMachine, gitCommit } from './platform/tools/run-provenance.js';
import { runSoak, soakPlan } from './operations/chaos/soak.js';
import { formatSoakSummary } from './operations/chaos/soak-summary.js';
import type { WorkerCode } from './operations/chaos/worker-fleet.js';

/** Exit codes CI can branch on. */
const Exit = { pass: 0, fail: 1, badArguments: 2, couldNotRun: 3 } as const;
const ROOT = fileURLToPath(new URL('../', import.meta.url));

const number = (flag: string, min: number, max: number, whole: boolean) => (value: string) => {
  const parsed = Number(value);
  if (!(whole ? /^\d+$/ : /^\d+(\.\d+)?$/).test(value) || parsed < min || parsed > max) {
    throw new InvalidArgumentError(`${flag} must be a ${whole ? 'whole ' : ''}number from ${min} to ${max}, got '${value}'`);
  }
  return parsed;
};

const program = new Command('soak')
  .description(
    'The chaos run (every fault: Stripe drops, 500s, 429s and latency; worker SIGKILLs; Postgres backends terminated; workflow resets) ' +
      'at a steady offered load for at least --minutes and at least --orders, whichever is later, with the outbox dispatcher, the receipts ' +
      'consumer and the retention reaper running (horizons shortened for the run). Samples worker RSS, outbox lag, orders/s and table sizes ' +
      'every --sample-seconds, then checks I1-I8 over every order and judges four targets.\n' +
      "Starts its own Temporal dev server, database (on DATABASE_URL's server or 127.0.0.1:5432) and Stripe emulator; uses NATS_URL or the local NATS.\n" +
      'Exit codes: 0 every target met, 1 a target missed (a violation, an unfinished order, RSS growth, outbox lag, a table that kept growing), ' +
      '2 bad arguments, 3 the run could not be set up.',
  )
  .option('--minutes <n>', 'offer orders for at least this long', number('--minutes', 1, 24 * 60, true), 30)
  .option('--orders <n>', 'and at least this many orders', number('--orders', 1, 1_000_000, true), 10_000)
  .option('--rate <per-second>', 'offered orders per second (sized for 2 cores under every fault)', number('--rate', 0.1, 1_000, false), 5.5)
  .option('--seed <k>', 'seed for the order mix and every fault', number('--seed', 0, 2 ** 31 - 1, true), 1)
  .option('--sample-seconds <n>', 'seconds between samples', number('--sample-seconds', 1, 3_600, true), 60)
  .option('--warmup-seconds <n>', 'RSS is compared with the first sample after this (default: a fifth of the load, at most 180)', number('--warmup-seconds', 0, 86_400, true))
  .option('--retention-seconds <n>', 'every retention horizon, for this run only (default: a sixth of the load, 60 to 300)', number('--retention-seconds', 10, 86_400, true))
  .option('--max-lag <seconds>', 'the outbox lag target', number('--max-lag', 1, 86_400, true), 30)
  .option('--drain <seconds>', 'how long after the load every order must have ended', number('--drain', 1, 86_400, true), 150)
  .option('--out <file>', 'where to write the JSON summary (default bench/results/soak-<date>-<sha>.json)')
  .option('--no-write', 'print the results without writing a file')
  .addOption(
    new Option('--worker <code>', "the workers' code: build (npm run build, then dist/ through the production launcher with its memory defaults) or source (tsx on src/)")
      .choices(['build', 'source'])
      .default('build'),
  )
  .option('--keep', 'keep the database and the logs', false)
  .option('--json', 'print the summary as JSON instead of the table', false)
  .exitOverride((error) => process.exit(error.exitCode === 0 ? Exit.pass : Exit.badArguments))
  .configureOutput({ writeErr: (text) => process.stderr.write(`soak: ${text}`) });

interface Flags {
  minutes: number;
  orders: number;
  rate: number;
  seed: number;
  sampleSeconds: number;
  warmupSeconds?: number;
  retentionSeconds?: number;
  maxLag: number;
  drain: number;
  out?: string;
  write: boolean;
  worker: WorkerCode;
  keep: boolean;
  json: boolean;
}

async function main(): Promise<number> {
  const flags = program.parse().opts<Flags>();
  const say = (line: string) => process.stderr.write(`soak: ${line}\n`);
  await ensureTemporalCli(say).catch((error: unknown) => {
    console.error(`soak: the run could not be set up: ${oneLine(error)}`);
    process.exit(Exit.couldNotRun);
  });
  if (flags.worker === 'build') {
    say('npm run build (the workers run the compiled dist/, as in production)');
    const build = await execa('npm', ['run', '--silent', 'build'], { cwd: ROOT, reject: false, all: true });
    if (build.exitCode !== 0) {
      console.error(`soak: the run could not be set up: npm run build failed (exit ${String(build.exitCode)}): ${build.all.trim().split('\n').slice(-3).join(' / ')}`);
      return Exit.couldNotRun;
    }
  }
  const startedAt = new Date();
  const loadBefore = os.loadavg();
  const options = {
    minutes: flags.minutes,
    orders: flags.orders,
    ratePerSecond: flags.rate,
    seed: flags.seed,
    sampleEveryMs: flags.sampleSeconds * 1000,
    ...(flags.warmupSeconds !== undefined && { warmupMs: flags.warmupSeconds * 1000 }),
    ...(flags.retentionSeconds !== undefined && { retentionSeconds: flags.retentionSeconds }),
    maxLagSeconds: flags.maxLag,
    drainSeconds: flags.drain,
    workerCode: flags.worker,
    keep: flags.keep,
    say,
  };
  const plan = soakPlan(options);
  say(`about ${Math.ceil((plan.loadSeconds + 60) / 60)} minutes of load and drain, then the check`);
  const summary = await runSoak(options);
  console.log(flags.json ? JSON.stringify(summary, null, 2) : formatSoakSummary(summary));

  if (flags.write) {
    const commit = await gitCommit(ROOT);
    const file = flags.out ?? path.join(ROOT, 'bench', 'results', `soak-${startedAt.toISOString().slice(0, 10)}-${commit}.json`);
    const document = {
      schema: 'order-payments-soak/1',
      startedAt: startedAt.toISOString(),
      commit,
      machine: describeMachine(),
      loadAverage: { before: loadBefore.map(round2), after: os.loadavg().map(round2) },
      ...summary,
    };
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, `${JSON.stringify(document, null, 2)}\n`);
    const shown = path.relative(process.cwd(), file);
    say(`wrote ${shown.startsWith('..') || shown === '' ? path.resolve(file) : shown}`);
  }
  return summary.ok ? Exit.pass : Exit.fail;
}

const round2 = (value: number) => Math.round(value * 100) / 100;

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`soak: the run could not complete: ${oneLine(error)}`);
    process.exit(Exit.couldNotRun);
  },
);

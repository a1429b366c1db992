// The chaos command (`npm run chaos`): concurrent orders under every fault on a throwaway stack,
// then invariants I1–I9; exits 0 pass, 1 fail, 2 bad arguments, 3 could not run.
import { Command, InvalidArgumentError } from 'commander';
import { runChaos } from './operations/chaos/chaos-run.js';
import { formatChaosSummary } from './operations/chaos/summary.js';
import { ensureTemporalCli, oneLine } from './platform/tools/bootstrap.js';

/** Exit codes CI can branch on. */
const Exit = { pass: 0, fail: 1, badArguments: 2, couldNotRun: 3 } as const;

const wholeNumber = (flag: string, min: number, max: number) => (value: string) => {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new InvalidArgumentError(`${flag} must be a whole number from ${min} to ${max}, got '${value}'`);
  }
  return Number(value);
};

const program = new Command('chaos')
  .description(
    'Run N concurrent orders through two worker processes under faults (Stripe drops, 500s, 429s and latency; worker SIGKILLs; ' +
      'Postgres backends terminated; workflow resets), wait for every order to end, then check invariants I1-I9.\n' +
      'Starts its own Temporal dev server, database (on DATABASE_URL\'s server or 127.0.0.1:5432) and Stripe emulator.\n' +
      'Exit codes: 0 pass, 1 a violation or an unfinished order, 2 bad arguments, 3 the run could not be set up.',
  )
  .option('--orders <n>', 'concurrent orders', wholeNumber('--orders', 1, 100_000), 100)
  .option('--duration <seconds>', 'how long kills, backend terminations and Stripe faults last, from the first order (resets follow the orders: one per 50)', wholeNumber('--duration', 1, 86_400), 60)
  .option('--seed <k>', 'seed for the order mix and every fault', wholeNumber('--seed', 0, 2 ** 31 - 1), 1)
  .option('--drain <seconds>', 'how long after the faults every order must have ended', wholeNumber('--drain', 1, 86_400), 150)
  .option('--keep', 'keep the database and the worker logs', false)
  .option('--json', 'print the report as JSON instead of the summary', false)
  .exitOverride((error) => process.exit(error.exitCode === 0 ? Exit.pass : Exit.badArguments))
  .configureOutput({ writeErr: (text) => process.stderr.write(`chaos: ${text}`) });

interface Flags {
  orders: number;
  duration: number;
  seed: number;
  drain: number;
  keep: boolean;
  json: boolean;
}

async function main(): Promise<number> {
  const flags = program.parse().opts<Flags>();
  const say = (line: string) => process.stderr.write(`chaos: ${line}\n`);
  // The pinned Temporal CLI, installed into .tools/venv on first use; a failure is one line.
  await ensureTemporalCli(say).catch((error: unknown) => {
    console.error(`chaos: the run could not be set up: ${oneLine(error)}`);
    process.exit(Exit.couldNotRun);
  });
  const report = await runChaos({
    orders: flags.orders,
    durationSeconds: flags.duration,
    seed: flags.seed,
    drainSeconds: flags.drain,
    keep: flags.keep,
    say,
  });
  console.log(flags.json ? JSON.stringify(report, null, 2) : formatChaosSummary(report));
  return report.ok ? Exit.pass : Exit.fail;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`chaos: the run could not complete: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(Exit.couldNotRun);
  },
);

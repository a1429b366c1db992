// The demo command (`npm run demo`): runs the scripted orders against the running stack, or one
// it starts, and exits 0 only when every expectation and invariant held.
import { Command } from 'commander';
import { ConfigError } from './platform/config/config-error.js';
import { describeStack } from './operations/stack/describe-stack.js';
import { holdStackInForeground } from './operations/stack/foreground.js';
import { stackFiles } from './operations/stack/paths.js';
import { PortInUseError } from './operations/stack/ports.js';
import { firstShutdownSignal } from './operations/stack/signals.js';
import { startStack, type RunningStack } from './operations/stack/stack.js';
import { probeRunningStack } from './operations/stack/stack-state.js';
import { addStackOptions, parseStackOptions } from './operations/stack/stack-options.js';
import { BootstrapError, oneLine } from './platform/tools/bootstrap.js';
import { runDemo } from './operations/demo/demo.js';

const say = (line: string) => {
  console.log(line);
};
const sayForStack = (line: string) => {
  say(`stack: ${line}`);
};

const program = addStackOptions(
  new Command('demo')
    .description(
      'Run scripted orders through every path of the saga (success, decline, a race for the last unit, a lost Stripe response, a cancellation) and check the invariants. Uses the stack `npm run stack` runs, or starts one.',
    )
    .option('--keep', 'leave the stack this demo started running afterwards, until Ctrl-C', false),
);

class Interrupted extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`${signal} received: demo interrupted`);
  }
}

async function main(): Promise<number> {
  const flags = program.parse().opts<{ keep: boolean }>();
  const options = parseStackOptions(flags);
  const signal = firstShutdownSignal();
  const interrupted = signal.then((name) => {
    throw new Interrupted(name);
  });
  interrupted.catch(() => undefined);

  const probe = await probeRunningStack(stackFiles(options.dataDir).stateFile);
  let owned: RunningStack | null = null;
  if (probe.running) {
    say(`demo: using the stack already running (pid ${probe.state.pid}, Web UI ${probe.state.uiUrl})`);
  } else {
    say(`demo: starting the local stack (${probe.reason})`);
    owned = await Promise.race([startStack({ ...options, say: sayForStack }), interrupted]);
    say(`\n${describeStack(owned.state, owned, { exports: false })}\n`);
  }
  const state = owned?.state ?? (probe.running ? probe.state : null);
  if (!state) throw new Error('no stack to run the demo on');

  let ok = false;
  try {
    ok = await Promise.race([runDemo(state, say), interrupted]);
  } catch (error) {
    if (owned) await owned.stop();
    throw error;
  }
  const code = ok ? 0 : 1;
  if (!owned) return code;
  if (flags.keep) {
    say(`\nThe stack stays up for exploring (--keep).\n\n${describeStack(owned.state, owned)}\n\nCtrl-C stops it.\n`);
    await holdStackInForeground(owned, sayForStack, signal);
    return code;
  }
  say('demo: stopping the stack it started (use --keep to leave it running)');
  await owned.stop();
  return code;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`demo: ${oneLine(error)}`);
    if (error instanceof Interrupted) process.exit(130);
    process.exit(error instanceof ConfigError || error instanceof PortInUseError || error instanceof BootstrapError ? 2 : 1);
  },
);

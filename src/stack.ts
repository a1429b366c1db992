// The local stack command (`npm run stack`): runs PostgreSQL, Temporal, the Stripe emulator, a
// worker and the message services in the foreground until Ctrl-C.
import { Command } from 'commander';
import { ConfigError } from './platform/config/config-error.js';
import { describeStack } from './operations/stack/describe-stack.js';
import { holdStackInForeground } from './operations/stack/foreground.js';
import { PortInUseError } from './operations/stack/ports.js';
import { startStack } from './operations/stack/stack.js';
import { addStackOptions, parseStackOptions } from './operations/stack/stack-options.js';
import { BootstrapError, oneLine } from './platform/tools/bootstrap.js';

const say = (line: string) => {
  console.log(`stack: ${line}`);
};

const program = addStackOptions(
  new Command('stack').description(
    'Run the whole local stack in the foreground: PostgreSQL, migrations, the Temporal dev server with its Web UI, the Stripe emulator and a worker. Ctrl-C stops it.',
  ),
);

async function main(): Promise<number> {
  const options = parseStackOptions(program.parse().opts());
  const stack = await startStack({ ...options, say });
  console.log(`\nThe local stack is up.\n\n${describeStack(stack.state, stack)}\n\nCtrl-C stops everything.\n`);
  return holdStackInForeground(stack, say);
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`stack: ${oneLine(error)}`);
    process.exit(error instanceof ConfigError || error instanceof PortInUseError || error instanceof BootstrapError ? 2 : 1);
  },
);

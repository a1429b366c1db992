import { Command } from 'commander';
import { ConfigError } from '../config/config-error.js';
import { describeStack } from './describe-stack.js';
import { holdStackInForeground } from './foreground.js';
import { PortInUseError } from './ports.js';
import { startStack } from './stack.js';
import { addStackOptions, parseStackOptions } from './stack-options.js';
import { BootstrapError, oneLine } from '../tools/bootstrap.js';

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

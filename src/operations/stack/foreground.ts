// Keeps `npm run stack` up until a shutdown signal or a part failing, then stops it in order and
// picks the exit code.
import { firstShutdownSignal } from './signals.js';
import type { RunningStack } from './stack.js';

/**
 * Keeps the stack up until Ctrl-C (SIGINT), SIGTERM, or one of its parts ending by itself;
 * then stops it in order. Resolves with the exit code: 0 when asked to stop, 1 on a failure.
 */
export async function holdStackInForeground(
  stack: RunningStack,
  say: (line: string) => void,
  signal: Promise<NodeJS.Signals> = firstShutdownSignal(),
): Promise<number> {
  const ended = await Promise.race([
    signal.then((name) => ({ code: 0, why: `${name} received` })),
    stack.failed.then((how) => ({ code: 1, why: how })),
  ]);
  say(`stopping (${ended.why})`);
  await stack.stop();
  say('stopped');
  return ended.code;
}

// Ends a command-line tool with its run's exit code, turning a bad setting or any other failure
// into one line per problem and the tool's own exit code for it.
import { ConfigError } from './config-error.js';

/**
 * Ends a command-line tool with the exit code its `run` resolves to. A bad setting ends it with
 * `codes.badConfig` and one line per problem; any other failure with `codes.failed` and one line
 * saying what could not be done (`couldNot`, e.g. 'the check could not run').
 */
export function exitWhenDone(command: string, run: Promise<number>, codes: { badConfig: number; failed: number }, couldNot: string): void {
  run.then(
    (code) => process.exit(code),
    (error: unknown) => {
      if (error instanceof ConfigError) {
        for (const problem of error.problems) console.error(`${command}: ${problem}`);
        process.exit(codes.badConfig);
      }
      console.error(`${command}: ${couldNot}: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(codes.failed);
    },
  );
}

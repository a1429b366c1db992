/**
 * Something the project needs could not be found, installed or started. Its message is one line
 * that says what, why and what to do; entry points print it and exit 2 (configuration or
 * environment), with no stack trace unless DEBUG=1.
 */
export class BootstrapError extends Error {
  override readonly name = 'BootstrapError';
}

/** The one line an entry point prints for `error`, with the stack as well under DEBUG=1. */
export function oneLine(error: unknown, env: NodeJS.ProcessEnv = process.env): string {
  if (env.DEBUG === '1' && error instanceof Error && error.stack) return error.stack;
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n').map((line) => line.trim()).filter(Boolean).join('; ');
}

/**
 * The one line a long-running entry point (worker, api, outbox dispatcher, receipts consumer)
 * prints when it cannot start or stops on a failure: what was unreachable and what to do, rather
 * than a driver's stack trace. Exit code 1 goes with it (2 is for configuration).
 */
export function startFailureLine(error: unknown, env: NodeJS.ProcessEnv = process.env): string {
  const line = oneLine(error, env);
  if (env.DEBUG === '1') return line;
  const brief = line.length > 200 ? `${line.slice(0, 200)}…` : line;
  if (/tcp connect error|Failed to connect before the deadline|No connection established/i.test(line)) {
    return `cannot reach Temporal at ${env.TEMPORAL_ADDRESS ?? 'localhost:7233'}: start it (npm run stack) or set TEMPORAL_ADDRESS (${brief})`;
  }
  const refused = /ECONNREFUSED ([\w.:[\]-]+)/.exec(line);
  if (refused) return `cannot connect to ${refused[1] ?? 'a server'}: is PostgreSQL (DATABASE_URL) or NATS (NATS_URL) running there? (${brief})`;
  return brief;
}

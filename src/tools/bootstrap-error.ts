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

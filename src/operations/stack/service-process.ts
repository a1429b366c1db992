// Starts one of the project's services (API, outbox dispatcher, receipts) as its own process for
// the stack, and waits for the log line that says it is ready.
import path from 'node:path';
import { spawnManaged, type ManagedProcess } from './child-process.js';
import { PROJECT_ROOT } from './paths.js';

export interface ServiceProcessOptions {
  /** How the stack names it in its messages, e.g. `the API`. */
  name: string;
  /** The service's entry point, relative to the project, e.g. `src/api.ts`. */
  entry: string;
  /** Its configuration, exactly as its `npm run` script reads it. */
  env: Record<string, string>;
  logFile: string;
  /** The `msg` of the log line that says the service is ready. */
  readyMessage: string | RegExp;
  say: (line: string) => void;
  readyTimeoutMs?: number;
}

interface LogLine {
  level?: number;
  msg?: string;
}

const PINO_ERROR = 50;

/**
 * One of the project's services as its own process, started from its entry point with
 * `node --import tsx` (not `npm run`, whose stop would leave the tsx child behind), so stopping
 * it by its own PID stops the service itself. Resolves once it logs `readyMessage`.
 */
export async function startServiceProcess(options: ServiceProcessOptions): Promise<ManagedProcess> {
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const isReady = (msg: string) => (typeof options.readyMessage === 'string' ? msg === options.readyMessage : options.readyMessage.test(msg));
  const service = spawnManaged({
    name: options.name,
    file: process.execPath,
    args: ['--import', 'tsx', path.join(PROJECT_ROOT, options.entry)],
    cwd: PROJECT_ROOT,
    env: options.env,
    logFile: options.logFile,
    onLine(line) {
      const parsed = parseLogLine(line);
      if (parsed?.msg !== undefined && isReady(parsed.msg)) markReady();
      if (parsed?.level !== undefined && parsed.level >= PINO_ERROR) options.say(`${options.name}: ${parsed.msg ?? line}`);
    },
  });
  const timeoutMs = options.readyTimeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      ready,
      service.exited.then((how) => {
        throw new Error(`${how} before it was ready; see ${options.logFile}`);
      }),
      new Promise((_, reject) => {
        timer = setTimeout(() => {
          reject(new Error(`${options.name} did not report ready within ${timeoutMs / 1000} s; see ${options.logFile}`));
        }, timeoutMs);
      }),
    ]);
  } catch (error) {
    await service.stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return service;
}

function parseLogLine(line: string): LogLine | null {
  if (!line.startsWith('{')) return null;
  try {
    return JSON.parse(line) as LogLine;
  } catch {
    return null;
  }
}

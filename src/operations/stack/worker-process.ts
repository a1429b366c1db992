// Starts the order worker (src/worker.ts) as its own process for the local stack, and waits
// until it logs that it polls.
import path from 'node:path';
import { spawnManaged, type ManagedProcess } from './child-process.js';
import { PROJECT_ROOT } from './paths.js';

export interface WorkerProcessOptions {
  /** The worker's configuration, exactly as `npm run worker` reads it. */
  env: Record<string, string>;
  logFile: string;
  say: (line: string) => void;
  /** How long bundling and connecting may take. Default 180 s (bundling is slow on two cores). */
  readyTimeoutMs?: number;
}

interface LogLine {
  level?: number;
  msg?: string;
}

const PINO_ERROR = 50;

/**
 * The worker as its own process, exactly as an operator runs it (`src/worker.ts`), so the stack
 * exercises the real entry point and its config checks. Resolves once it logs that it polls.
 */
export async function startWorkerProcess(options: WorkerProcessOptions): Promise<ManagedProcess> {
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const worker = spawnManaged({
    name: 'worker',
    file: process.execPath,
    args: ['--import', 'tsx', path.join(PROJECT_ROOT, 'src', 'worker.ts')],
    cwd: PROJECT_ROOT,
    env: options.env,
    logFile: options.logFile,
    // The worker drains in-flight activities on SIGTERM for up to its 30 s grace time.
    forceAfterMs: 35_000,
    onLine(line) {
      const parsed = parseLogLine(line);
      if (parsed?.msg === 'worker started') markReady();
      if (parsed?.level !== undefined && parsed.level >= PINO_ERROR) options.say(`worker: ${parsed.msg ?? line}`);
    },
  });
  const timeoutMs = options.readyTimeoutMs ?? 180_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      ready,
      worker.exited.then((how) => {
        throw new Error(`${how} before it was ready; see ${options.logFile}`);
      }),
      new Promise((_, reject) => {
        timer = setTimeout(() => {
          reject(new Error(`the worker did not report ready within ${timeoutMs / 1000} s; see ${options.logFile}`));
        }, timeoutMs);
      }),
    ]);
  } catch (error) {
    await worker.stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return worker;
}

function parseLogLine(line: string): LogLine | null {
  if (!line.startsWith('{')) return null;
  try {
    return JSON.parse(line) as LogLine;
  } catch {
    return null;
  }
}

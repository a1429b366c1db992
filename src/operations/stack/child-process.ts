// Spawns the local stack's long-running children with output to a log file, a stop that
// escalates to SIGKILL, and a kill of any still running when the stack's process exits.
import { execa, type ResultPromise } from 'execa';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

/** A long-running child of the stack whose output goes to a log file. */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  /** Settles when the process ends, for whatever reason, with how it ended. */
  readonly exited: Promise<string>;
  /** SIGTERM (or the `stopSignal`), then SIGKILL if it has not ended after `forceAfterMs`. */
  stop(): Promise<void>;
}

export interface SpawnOptions {
  name: string;
  file: string;
  args: string[];
  logFile: string;
  cwd?: string;
  /** Added to this process's environment. */
  env?: Record<string, string>;
  /** Called with each line the process writes to stdout, besides the log file. */
  onLine?: (line: string) => void;
  forceAfterMs?: number;
  /** Run as this user and group (root only), e.g. PostgreSQL, which refuses to run as root. */
  uid?: number;
  gid?: number;
  /** What `stop()` sends first. Default SIGTERM. */
  stopSignal?: NodeJS.Signals;
}

const running = new Set<ResultPromise>();
let exitHookInstalled = false;

/**
 * Children still running when this process exits are killed. execa's own `cleanup` is not used:
 * its signal-exit dependency re-raises SIGINT when the number of SIGINT listeners happens to
 * equal the number of children, which killed the stack in the middle of its ordered shutdown.
 */
function killChildrenOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/**
 * Spawns through execa, which escalates a stop that is ignored to SIGKILL
 * (`forceKillAfterDelay`); a child left running when this process exits is killed.
 */
export function spawnManaged(options: SpawnOptions): ManagedProcess {
  killChildrenOnExit();
  mkdirSync(path.dirname(options.logFile), { recursive: true });
  const log = { file: options.logFile, append: true } as const;
  const child: ResultPromise = execa(options.file, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdin: 'ignore',
    stdout: options.onLine ? ['pipe', log] : log,
    stderr: log,
    buffer: false,
    reject: false,
    cleanup: false,
    forceKillAfterDelay: options.forceAfterMs ?? 10_000,
    ...(options.uid === undefined ? {} : { uid: options.uid }),
    ...(options.gid === undefined ? {} : { gid: options.gid }),
  });
  if (options.onLine && child.stdout) {
    let pending = '';
    const onLine = options.onLine;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    });
  }
  running.add(child);
  const exited = child.then((result) => {
    running.delete(child);
    if (result.failed && result.exitCode === undefined && !result.signal) return `${options.name} could not be started: ${result.shortMessage}`;
    if (result.signal) return `${options.name} was stopped by ${result.signal}`;
    return `${options.name} exited with code ${String(result.exitCode)}`;
  });
  return {
    name: options.name,
    pid: child.pid ?? -1,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill(options.stopSignal ?? 'SIGTERM');
      await exited;
    },
  };
}

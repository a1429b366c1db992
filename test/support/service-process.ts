// Test support: starts a service entry point (outbox dispatcher, receipts) as its own process and
// stops whatever a failed test left running.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  readonly exited: Promise<ProcessExit>;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
  stop(graceMs?: number): Promise<ProcessExit>;
  output(): string;
}

const running = new Set<ServiceProcess>();

/** Stops every process this file started and did not see exit: for afterAll after a failed test. */
export async function stopServiceProcesses(): Promise<void> {
  await Promise.all([...running].map((service) => service.stop(1_000)));
}

/**
 * Starts one of the project's entry points (e.g. src/outbox-dispatcher.ts) as an operator would, a
 * process of its own. `node --import tsx`, not the tsx binary: the PID is the service itself,
 * so a SIGKILL it sends itself at a failpoint is the signal we see.
 */
export function startServiceProcess(entry: string, env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: ROOT,
    // No metrics listener unless the test names a port: files run side by side.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
    });
  });
  const service: ServiceProcess = {
    exited,
    async stop(graceMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      return exited;
    },
    output: () => output,
  };
  running.add(service);
  void exited.then(() => running.delete(service));
  return service;
}

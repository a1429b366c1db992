// The chaos run's worker processes (src/worker.ts as developers run it, or the production build
// through its launcher) in fixed slots that are refilled when a worker is killed; logs each to a
// file and counts Postgres-answered replays.
import { createWriteStream, type WriteStream } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';

const PROJECT_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const WORKER_ENTRY = path.join(PROJECT_ROOT, 'src', 'worker.ts');
const LAUNCHER = path.join(PROJECT_ROOT, 'scripts', 'run.sh');
const READY_TIMEOUT_MS = 120_000;
const MAX_UNEXPECTED_EXITS = 20;
const TAIL_LINES = 12;

/** Log messages the fleet counts, as the activities write them. */
const COUNTED_MESSAGES = {
  'authorization answered from Postgres; Stripe not called': 'authorizationsAnsweredFromPostgres',
  'capture answered from Postgres; Stripe not called': 'capturesAnsweredFromPostgres',
  'void answered from Postgres; Stripe not called': 'voidsAnsweredFromPostgres',
  'refund answered from Postgres; Stripe not called': 'refundsAnsweredFromPostgres',
} as const;

export type CountedMessage = (typeof COUNTED_MESSAGES)[keyof typeof COUNTED_MESSAGES];

interface RunningWorker {
  generation: number;
  child: ResultPromise;
  ready: boolean;
  log: WriteStream;
}

/** A worker that ended without the fleet ending it, and the last it wrote. */
export interface UnexpectedExit {
  slot: number;
  generation: number;
  how: string;
  lastLines: string[];
}

export interface FleetCounts {
  started: number;
  killed: number;
  /** Exits the fleet did not cause: a crash, or a start that failed. */
  unexpectedExits: number;
  exits: UnexpectedExit[];
  messages: Record<CountedMessage, number>;
}

/**
 * Which code a fleet's workers run:
 * - `source`: `node --import tsx src/worker.ts`, as in development (no build needed);
 * - `build`: the compiled `dist/worker.js` through the production launcher (`RUN_FROM=dist sh
 *   scripts/run.sh worker`), so with the production memory defaults (the heap caps and
 *   MALLOC_ARENA_MAX); `npm run build` first. The launcher `exec`s node, so the PID the fleet
 *   kills and measures is the worker itself.
 */
export type WorkerCode = 'source' | 'build';

/** How the fleet starts a worker of that code. */
export function workerCommand(code: WorkerCode): { file: string; args: string[]; env: Record<string, string>; shown: string } {
  return code === 'build'
    ? { file: 'sh', args: [LAUNCHER, 'worker'], env: { RUN_FROM: 'dist' }, shown: 'RUN_FROM=dist sh scripts/run.sh worker' }
    : { file: process.execPath, args: ['--import', 'tsx', WORKER_ENTRY], env: {}, shown: 'node --import tsx src/worker.ts' };
}

/**
 * Worker processes as operators run them (their own process, configured by the environment),
 * kept at a fixed number of slots: a slot whose worker is killed is refilled. Their JSON log
 * lines go to one file per process; a few messages are counted on the way.
 */
export class WorkerFleet {
  readonly #slots: (RunningWorker | null)[];
  readonly #counts: FleetCounts = {
    started: 0,
    killed: 0,
    unexpectedExits: 0,
    exits: [],
    messages: { authorizationsAnsweredFromPostgres: 0, capturesAnsweredFromPostgres: 0, voidsAnsweredFromPostgres: 0, refundsAnsweredFromPostgres: 0 },
  };
  #stopping = false;

  constructor(
    size: number,
    private readonly env: Record<string, string>,
    private readonly logDir: string,
    private readonly code: WorkerCode = 'source',
  ) {
    this.#slots = Array.from({ length: size }, () => null);
  }

  /** Starts every slot's worker and waits until each polls its task queue. */
  async start(): Promise<void> {
    await Promise.all(this.#slots.map((_, slot) => this.#launch(slot)));
  }

  /** Slots whose worker is up and polling. */
  readySlots(): number[] {
    return this.#slots.flatMap((worker, slot) => (worker?.ready ? [slot] : []));
  }

  /** SIGKILLs the slot's worker, as a crash or an OOM kill would, and starts a fresh one in its place. */
  killAndRestart(slot: number): void {
    const worker = this.#slots[slot];
    if (!worker) return;
    this.#counts.killed += 1;
    this.#slots[slot] = null;
    worker.child.kill('SIGKILL');
    void this.#launch(slot).catch(() => undefined);
  }

  /** Waits until every slot has a ready worker (after the last restart). */
  async allReady(timeoutMs = READY_TIMEOUT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.readySlots().length < this.#slots.length) {
      if (Date.now() > deadline) throw new Error(`worker slots not ready after ${timeoutMs / 1000} s; logs in ${this.logDir}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Each slot's current process (a slot between a kill and its restart has none), to sample its memory. */
  processes(): { slot: number; generation: number; pid: number; ready: boolean }[] {
    return this.#slots.flatMap((worker, slot) =>
      worker?.child.pid === undefined ? [] : [{ slot, generation: worker.generation, pid: worker.child.pid, ready: worker.ready }],
    );
  }

  counts(): FleetCounts {
    return structuredClone(this.#counts);
  }

  /** Graceful stop (SIGTERM: in-flight activities finish), SIGKILL if one lingers. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.all(
      this.#slots.map(async (worker) => {
        if (!worker) return;
        worker.child.kill('SIGTERM');
        await worker.child;
      }),
    );
  }

  async #launch(slot: number): Promise<void> {
    const generation = this.#counts.started++;
    const log = createWriteStream(path.join(this.logDir, `worker-${slot}-${generation}.log`));
    // node --import tsx, not the tsx binary, or the launcher that execs node: either way the
    // PID killed is the worker itself.
    const command = workerCommand(this.code);
    const child = execa(command.file, command.args, {
      cwd: PROJECT_ROOT,
      // Several workers on one machine: no metrics endpoint each, unless the run names one.
      env: { WORKER_METRICS_PORT: '0', ...command.env, ...this.env },
      extendEnv: false,
      stdin: 'ignore',
      buffer: false,
      reject: false,
      forceKillAfterDelay: 40_000,
    });
    const worker: RunningWorker = { generation, child, ready: false, log };
    this.#slots[slot] = worker;
    let markReady: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => {
      markReady = resolve;
    });
    // The last lines a worker wrote, kept to explain an exit nobody asked for.
    const tail: string[] = [];
    const remember = (text: string) => {
      tail.push(...text.split('\n').filter((line) => line.trim() !== ''));
      tail.splice(0, Math.max(0, tail.length - TAIL_LINES));
    };
    let pending = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      log.write(chunk);
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      remember(lines.join('\n'));
      for (const line of lines) {
        const message = messageOf(line);
        if (message === 'worker started') {
          worker.ready = true;
          markReady();
        } else if (message && message in COUNTED_MESSAGES) {
          this.#counts.messages[COUNTED_MESSAGES[message as keyof typeof COUNTED_MESSAGES]] += 1;
        }
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      log.write(chunk);
      remember(chunk.toString('utf8'));
    });
    const exited = child.then((result) => {
      log.end();
      // Killed by the fleet, or stopped with it: expected. Anything else is a finding.
      if (this.#slots[slot] === worker && !this.#stopping) {
        this.#counts.unexpectedExits += 1;
        const how = result.signal ? `signal ${result.signal}` : `exit code ${String(result.exitCode)}`;
        this.#counts.exits.push({ slot, generation, how, lastLines: [...tail] });
        this.#slots[slot] = null;
        // A worker that cannot stay up is not restarted forever; the run's deadline reports it.
        if (this.#counts.unexpectedExits <= MAX_UNEXPECTED_EXITS) void this.#launch(slot).catch(() => undefined);
      }
      return result;
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        ready,
        exited.then((result) => {
          if (!worker.ready) throw new Error(`worker ${slot} (generation ${generation}) exited before it was ready: ${result.shortMessage}`);
        }),
        new Promise((_, reject) => {
          timer = setTimeout(() => {
            reject(new Error(`worker ${slot} was not ready after ${READY_TIMEOUT_MS / 1000} s`));
          }, READY_TIMEOUT_MS);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function messageOf(line: string): string | null {
  if (!line.startsWith('{')) return null;
  try {
    const parsed = JSON.parse(line) as { msg?: unknown };
    return typeof parsed.msg === 'string' ? parsed.msg : null;
  } catch {
    return null;
  }
}

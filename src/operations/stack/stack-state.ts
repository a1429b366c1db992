// The running stack's state file (.data/stack.json): writing and removing it, and the probe that
// tells whether the stack it describes is still up.
import { readFile, rm } from 'node:fs/promises';
import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { z } from 'zod';
import { jetStreamAvailable } from '../../messaging/nats/nats-connection.js';
import { seedFileAuthenticator } from '../../messaging/nats/nats-credentials.js';
import { writePrivateFile } from '../../platform/tools/private-files.js';
import { isReachable } from './postgres.js';

/** What a running stack publishes about itself in `.data/stack.json`. */
export const stackStateSchema = z.object({
  pid: z.number().int().positive(),
  startedAt: z.string(),
  temporalAddress: z.string().min(1),
  namespace: z.string().min(1),
  taskQueue: z.string().min(1),
  uiUrl: z.url(),
  databaseUrl: z.string().regex(/^postgres(ql)?:\/\//),
  postgres: z.enum(['external', 'local', 'embedded']),
  emulatorUrl: z.url(),
  stripeSecretKey: z.string().regex(/^sk_test_\w+$/),
  apiUrl: z.url(),
  stripeWebhookSecret: z.string().regex(/^whsec_\S+$/),
  natsUrl: z.string().min(1),
  nats: z.enum(['external', 'local', 'started']),
  outboxStream: z.string().min(1),
  outboxSubjectPrefix: z.string().min(1),
  /** Each message service's nkey seed on the stack's own broker; null on a broker it found. */
  natsSeedFiles: z.object({ outboxDispatcher: z.string().min(1), receipts: z.string().min(1) }).nullable().default(null),
  /** The codec server the Web UI decodes with, and its development bearer token (this file is 0600). */
  codecServerUrl: z.url().nullable().default(null),
  codecServerToken: z.string().min(1).nullable().default(null),
  /** The stack's service processes, so a probe can tell that they still run. */
  services: z.object({ api: z.number().int().positive(), outboxDispatcher: z.number().int().positive(), receipts: z.number().int().positive() }),
});
export type StackState = z.output<typeof stackStateSchema>;

/** Written 0600: it holds the webhook secret and the database URL with its password. */
export async function writeStackState(file: string, state: StackState): Promise<void> {
  await writePrivateFile(file, `${JSON.stringify(state, null, 2)}\n`);
}

/** Removes the state file, but only if it is still this process's. */
export async function removeStackState(file: string, pid = process.pid): Promise<void> {
  const state = await readStackState(file);
  if (state?.pid === pid) await rm(file, { force: true });
}

async function readStackState(file: string): Promise<StackState | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return null;
  }
  try {
    const parsed = stackStateSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export type StackProbe = { running: true; state: StackState } | { running: false; reason: string };

/**
 * A stack counts as running when its state file names a live process and every part answers:
 * the emulator, the Temporal namespace, a worker polling the task queue, PostgreSQL, the API,
 * NATS, and the outbox dispatcher's and receipts consumer's processes.
 */
export async function probeRunningStack(file: string): Promise<StackProbe> {
  const state = await readStackState(file);
  if (!state) return { running: false, reason: `no stack state in ${file}` };
  if (!isAlive(state.pid)) return { running: false, reason: `the stack that wrote ${file} (pid ${state.pid}) is gone` };
  try {
    const health = await fetch(new URL('/_emulator/health', state.emulatorUrl), { signal: AbortSignal.timeout(2_000) });
    if (!health.ok) return { running: false, reason: `the Stripe emulator at ${state.emulatorUrl} answered ${health.status}` };
  } catch {
    return { running: false, reason: `the Stripe emulator at ${state.emulatorUrl} does not answer` };
  }
  try {
    const connection = await Connection.connect({ address: state.temporalAddress, connectTimeout: 2_000 });
    try {
      const queue = await connection.workflowService.describeTaskQueue({
        namespace: state.namespace,
        taskQueue: { name: state.taskQueue },
        taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      if (queue.pollers.length === 0) return { running: false, reason: `no worker polls task queue ${state.taskQueue}` };
    } finally {
      await connection.close();
    }
  } catch {
    return { running: false, reason: `Temporal at ${state.temporalAddress} does not answer` };
  }
  if (!(await isReachable(state.databaseUrl))) return { running: false, reason: 'its PostgreSQL does not answer' };
  try {
    const health = await fetch(new URL('/healthz', state.apiUrl), { signal: AbortSignal.timeout(2_000) });
    if (!health.ok) return { running: false, reason: `the API at ${state.apiUrl} answered ${health.status}` };
  } catch {
    return { running: false, reason: `the API at ${state.apiUrl} does not answer` };
  }
  const probe = state.natsSeedFiles ? await seedFileAuthenticator(state.natsSeedFiles.outboxDispatcher).catch(() => undefined) : undefined;
  if (!(await jetStreamAvailable(state.natsUrl, 2_000, probe))) return { running: false, reason: `JetStream at ${state.natsUrl} does not answer` };
  if (!isAlive(state.services.outboxDispatcher)) return { running: false, reason: 'its outbox dispatcher is gone' };
  if (!isAlive(state.services.receipts)) return { running: false, reason: 'its receipts consumer is gone' };
  return { running: true, state };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// Proves tracing on or off never changes a value a workflow draws: a run recorded on a worker with
// the workflow's tracing interceptors replays without them, though it draws a random ID after a
// traced call and uses it as an activity ID; interceptors that draw from the workflow's random
// numbers, as the SDK's OpenTelemetry ones did, fail the same replay.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OTEL_WORKFLOW_INTERCEPTORS, workflowSpanSinks } from '../../src/platform/temporal/order-worker.js';
import type { EchoActivities } from '../fixtures/workflows/draws-after-tracing.js';

const WORKFLOWS = fileURLToPath(new URL('../fixtures/workflows/draws-after-tracing.ts', import.meta.url));
const RANDOM_DRAWING_INTERCEPTORS = fileURLToPath(new URL('../fixtures/workflows/random-drawing-interceptors.ts', import.meta.url));
const activities: EchoActivities = { echo: (value) => Promise.resolve(value) };

Runtime.install({ logger: new DefaultLogger('WARN') });

let connection: NativeConnection;
let clientConnection: Connection;
let client: Client;
beforeAll(async () => {
  connection = await NativeConnection.connect({ address: inject('temporalAddress') });
  clientConnection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection: clientConnection, namespace: 'default' });
});
afterAll(async () => {
  await clientConnection.close();
  await connection.close();
});

/** Runs the workflow on a worker with `interceptorModule` in its bundle; returns its history. */
async function recordWith(interceptorModule: string) {
  const taskQueue = `tracing-determinism-${randomUUID()}`;
  const workflowId = `draws-after-tracing-${randomUUID()}`;
  const worker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue,
    workflowsPath: WORKFLOWS,
    interceptors: { workflowModules: [interceptorModule] },
    sinks: workflowSpanSinks(null),
    activities,
  });
  const handle = await worker.runUntil(async () => {
    const started = await client.workflow.start('drawsAfterTracedCalls', { taskQueue, workflowId });
    await started.result();
    return started;
  });
  return { workflowId, history: await handle.fetchHistory() };
}

/** Replays `history` on a worker without any workflow interceptors: tracing off. */
function replayUntraced({ workflowId, history }: Awaited<ReturnType<typeof recordWith>>): Promise<void> {
  return Worker.runReplayHistory({ workflowsPath: WORKFLOWS }, history, workflowId);
}

describe('tracing and the workflow’s random numbers', () => {
  it('a run recorded with the tracing interceptors replays without them: the ID it drew after a traced call is drawn again', async () => {
    await expect(replayUntraced(await recordWith(OTEL_WORKFLOW_INTERCEPTORS))).resolves.toBeUndefined();
  }, 120_000);

  it('the negative control: interceptors drawing from the workflow’s random numbers fail the same replay', async () => {
    await expect(replayUntraced(await recordWith(RANDOM_DRAWING_INTERCEPTORS))).rejects.toThrow(/nondetermini/i);
  }, 120_000);
});

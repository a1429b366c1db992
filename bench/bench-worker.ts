/**
 * The benchmark's worker process: the production worker (`createOrderWorker`, the prebundled
 * saga, a pg pool and the Stripe SDK) or the baseline worker (the no-op workflow and
 * activities, with the same tuning), with its pool's round trips counted. It answers the
 * benchmark's `stats` requests over IPC, so its memory is measured apart from the load.
 */
import { readFile } from 'node:fs/promises';
import { Client, Connection } from '@temporalio/client';
import { getEachMessage, sendMessage } from 'execa';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { z } from 'zod';
import { createPool } from '../src/platform/db/pool.js';
import { createStripeClient } from '../src/money/stripe/client.js';
import { createOrderWorker, ORDER_WORKER_TUNING } from '../src/platform/temporal/order-worker.js';
import { workerDeploymentOptions, workflowBuildIdOf } from '../src/platform/temporal/worker-deployment.js';
import { becomeCurrent } from '../src/operations/deploy/deployment-routing.js';
import { startTracing } from '../src/platform/telemetry/tracing.js';
import { workerTelemetryOptions } from '../src/platform/telemetry/worker-telemetry.js';
import { dataConverterFor, FAILURE_CONVERTER_PATH } from '../src/platform/temporal/payload-encryption/data-converter.js';
import { loadPayloadEncryptionSettings } from '../src/platform/temporal/payload-encryption/settings.js';
import { createBaselineActivities } from './baseline-activities.js';
import { countQueries } from './query-counter.js';
import type { WorkerReply, WorkerRequest } from './worker-protocol.js';

const env = z
  .object({
    BENCH_WORKER_MODE: z.enum(['saga', 'baseline']),
    BENCH_WORKFLOW_BUNDLE: z.string().min(1),
    TEMPORAL_ADDRESS: z.string().min(1),
    TEMPORAL_TASK_QUEUE: z.string().min(1),
    DATABASE_URL: z.string().min(1),
    DATABASE_POOL_SIZE: z.coerce.number().int().positive().default(10),
    STRIPE_API_BASE: z.url(),
    STRIPE_SECRET_KEY: z.string().min(1),
    /** Set: the worker's metrics (the SDK's Prometheus exporter on this port) and traces (this file) are on, as in the stack. */
    BENCH_METRICS_PORT: z.coerce.number().int().positive().optional(),
    /** `off`: the saga's payloads unencrypted, for the encryption comparison only (bench.ts). */
    BENCH_ENCRYPTION: z.enum(['on', 'off']).default('on'),
    BENCH_TRACE_FILE: z.string().min(1).optional(),
  })
  .parse(process.env);

const telemetryOptions = workerTelemetryOptions(env.BENCH_METRICS_PORT ?? null);
Runtime.install({ logger: new DefaultLogger('WARN'), ...(telemetryOptions && { telemetryOptions }) });
const tracing = env.BENCH_TRACE_FILE ? startTracing('order-payments-bench-worker', { TRACE_FILE: env.BENCH_TRACE_FILE }) : null;
const connection = await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS });
const db = createPool({ connectionString: env.DATABASE_URL, max: env.DATABASE_POOL_SIZE, applicationName: 'order-payments-bench-worker' });
const counter = countQueries(db);
const stripe = createStripeClient({ secretKey: env.STRIPE_SECRET_KEY, apiBase: env.STRIPE_API_BASE });
// Both workloads run versioned, as production does: a deployment of their own, PINNED runs.
const deployment = { deploymentName: env.TEMPORAL_TASK_QUEUE, buildId: workflowBuildIdOf(await readFile(env.BENCH_WORKFLOW_BUNDLE, 'utf8')) };

const worker =
  env.BENCH_WORKER_MODE === 'saga'
    ? await createOrderWorker({
        connection,
        namespace: 'default',
        taskQueue: env.TEMPORAL_TASK_QUEUE,
        deps: { db, stripe },
        dataConverter: env.BENCH_ENCRYPTION === 'on' ? dataConverterFor(loadPayloadEncryptionSettings()) : { failureConverterPath: FAILURE_CONVERTER_PATH },
        deployment,
        workflowBundle: { codePath: env.BENCH_WORKFLOW_BUNDLE },
        tracing,
      })
    : await Worker.create({
        ...ORDER_WORKER_TUNING,
        connection,
        namespace: 'default',
        taskQueue: env.TEMPORAL_TASK_QUEUE,
        workflowBundle: { codePath: env.BENCH_WORKFLOW_BUNDLE },
        workerDeploymentOptions: workerDeploymentOptions(deployment),
        dataConverter: dataConverterFor(loadPayloadEncryptionSettings()),
        activities: createBaselineActivities(),
      });

const running = worker.run();
const clientConnection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
await becomeCurrent(new Client({ connection: clientConnection }), deployment, 'bench worker');
await clientConnection.close();
await sendMessage({ type: 'ready' } satisfies WorkerReply);

for await (const message of getEachMessage()) {
  const request = message as WorkerRequest;
  if (request.type === 'stats') {
    const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
    const { user, system } = process.cpuUsage();
    await sendMessage({
      type: 'stats',
      id: request.id,
      rss,
      heapUsed,
      heapTotal,
      external,
      cpuMicros: user + system,
      ...counter.read(),
    } satisfies WorkerReply);
  } else {
    worker.shutdown();
    break;
  }
}
await running;
await db.end();
await connection.close();
await tracing?.shutdown();

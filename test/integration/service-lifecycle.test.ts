/**
 * Each long-running service (worker, API, outbox dispatcher, receipts consumer) started as an
 * operator starts it, a process of its own: its first log line names the build it runs, its
 * /metrics says the same (`order_payments_build_info`), and SIGTERM stops it cleanly, exit 0.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../../src/operations/stack/ports.js';
import { createTestStream, eventually, TEST_NATS_URL, type TestStream } from '../support/nats.js';
import { samples, scrape } from '../support/prometheus-text.js';
import { startSagaHarness, STRIPE_TEST_KEY, type SagaHarness } from '../support/saga-harness.js';
import { startServiceProcess, stopServiceProcesses, type ServiceProcess } from '../support/service-process.js';
import { startWorkerProcess, stopWorkerProcesses } from '../support/worker-process.js';

const RELEASE = `release-${randomBytes(4).toString('hex')}`;

let harness: SagaHarness;
let stream: TestStream;

beforeAll(async () => {
  harness = await startSagaHarness({ worker: false });
  stream = await createTestStream();
}, 120_000);
afterAll(async () => {
  await stopServiceProcesses();
  await stopWorkerProcesses();
  await stream.close();
  await harness.close();
});

function firstLine(output: string): Record<string, unknown> {
  const line = output.split('\n').find((candidate) => candidate.startsWith('{'));
  return JSON.parse(line ?? '{}') as Record<string, unknown>;
}

async function buildInfo(metricsPort: number): Promise<Record<string, string>[]> {
  const text = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
  return samples(text, 'order_payments_build_info').map(({ labels, value }) => ({ ...labels, value: String(value) }));
}

async function untilLogged(service: ServiceProcess, message: string): Promise<void> {
  await eventually(message, () => Promise.resolve(service.output().includes(`"msg":"${message}"`) ? true : undefined), 60_000);
}

describe('each service names its build and stops cleanly on SIGTERM', () => {
  it('the worker: its workflow build ID first and in /metrics; SIGTERM drains it, exit 0', async () => {
    const metricsPort = await findFreePort();
    const worker = await startWorkerProcess(harness, { env: { WORKER_METRICS_PORT: String(metricsPort) } });
    expect(firstLine(worker.output())).toMatchObject({ msg: 'worker starting', buildId: harness.deployment.buildId });
    expect(await buildInfo(metricsPort)).toEqual([
      expect.objectContaining({ service: 'worker', build_id: harness.deployment.buildId, deployment: harness.deployment.deploymentName, value: '1' }),
    ]);
    expect(await worker.stop()).toEqual({ code: 0, signal: null });
    expect(worker.output()).toContain('"msg":"worker stopped"');
  }, 180_000);

  it('the API, the outbox dispatcher and the receipts consumer: BUILD_ID first and in /metrics; SIGTERM, exit 0', async () => {
    const ports = { api: await findFreePort(), apiMetrics: await findFreePort(), dispatcher: await findFreePort(), receipts: await findFreePort() };
    const messaging = { DATABASE_URL: harness.db.url, NATS_URL: TEST_NATS_URL, OUTBOX_STREAM: stream.stream, OUTBOX_SUBJECT_PREFIX: stream.subjectPrefix, BUILD_ID: RELEASE };
    const services = [
      {
        name: 'api',
        ready: 'api listening on',
        metricsPort: ports.apiMetrics,
        process: startServiceProcess('src/api.ts', {
          DATABASE_URL: harness.db.url,
          TEMPORAL_ADDRESS: harness.temporalAddress,
          TEMPORAL_TASK_QUEUE: harness.taskQueue,
          STRIPE_SECRET_KEY: STRIPE_TEST_KEY,
          STRIPE_WEBHOOK_SECRET: `whsec_${randomBytes(24).toString('base64url')}`,
          API_PORT: String(ports.api),
          API_METRICS_PORT: String(ports.apiMetrics),
          BUILD_ID: RELEASE,
        }),
      },
      { name: 'outbox-dispatcher', ready: 'outbox dispatcher started', metricsPort: ports.dispatcher, process: startServiceProcess('src/outbox-dispatcher.ts', { ...messaging, METRICS_PORT: String(ports.dispatcher) }) },
      { name: 'receipts', ready: 'receipts consumer started', metricsPort: ports.receipts, process: startServiceProcess('src/receipts.ts', { ...messaging, METRICS_PORT: String(ports.receipts) }) },
    ];
    for (const service of services) {
      if (service.name === 'api') await eventually('the API to listen', () => Promise.resolve(service.process.output().includes(`api listening on`) ? true : undefined), 60_000);
      else await untilLogged(service.process, service.ready);
      expect(firstLine(service.process.output()), service.name).toMatchObject({ buildId: RELEASE });
      expect(await buildInfo(service.metricsPort), service.name).toEqual([{ service: service.name, build_id: RELEASE, value: '1' }]);
    }
    for (const service of services) {
      expect(await service.process.stop(30_000), `${service.name}:\n${service.process.output()}`).toEqual({ code: 0, signal: null });
    }
    expect(services[1]?.process.output()).toContain('"msg":"outbox dispatcher stopped"');
    expect(services[2]?.process.output()).toContain('"msg":"receipts consumer stopped"');
  }, 180_000);
});

// Vitest's global setup: finds or installs what the run needs (Temporal CLI, Chromium, promtool,
// PostgreSQL, a JetStream broker), and starts one Temporal dev server and one workflow bundle.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { findFreePort } from '../src/operations/stack/ports.js';
import { writeWorkflowBundles } from '../src/platform/temporal/bundle-workflows.js';
import { ORDER_SEARCH_ATTRIBUTES } from '../src/platform/temporal/search-attributes.js';
import { DEV_SERVER_DYNAMIC_CONFIG } from '../src/platform/temporal/dev-server-settings.js';
import { BootstrapError, ensureChromium, ensurePromtool, ensureRedisServer, ensureTemporalCli, findNats, findPostgres, oneLine } from '../src/platform/tools/bootstrap.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalCli: string;
    /** The traced workflow bundle (dist/workflow-bundle.traced.js's recipe), with its build ID beside it. */
    workflowBundlePath: string;
    /** The untraced one (dist/workflow-bundle.js's recipe), beside it. */
    untracedWorkflowBundlePath: string;
    /** Both bundles' build ID: the one every test worker of this source polls as. */
    workflowBuildId: string;
    /** The Chromium the browser test drives, as the bootstrap found or installed it. */
    chromiumPath: string;
    /** The promtool the ops test checks the alert rules with, as the bootstrap found or installed it. */
    promtoolPath: string;
    /** The redis-server the rate-limit tests start their own servers from, as the bootstrap found or installed it. */
    redisServerPath: string;
  }
}

const say = (line: string) => {
  console.log(`test setup: ${line}`);
};

/**
 * Everything the run needs, found or installed the way the stack does it (src/platform/tools/bootstrap.ts):
 * the pinned Temporal CLI, Chromium, promtool, redis-server, a PostgreSQL server and a JetStream broker. The
 * server and the broker reach the test files through TEST_DATABASE_ADMIN_URL and NATS_URL, which
 * the worker processes inherit. A missing piece stops the run with one line.
 */
async function bootstrap(scratch: string) {
  const temporalCli = await ensureTemporalCli(say);
  const chromiumPath = await ensureChromium({ say });
  const promtoolPath = await ensurePromtool({ say });
  const redisServerPath = await ensureRedisServer({ say });
  const postgres = await findPostgres({
    url: process.env.TEST_DATABASE_ADMIN_URL ?? process.env.DATABASE_URL,
    embedded: {
      port: await findFreePort(),
      dataDir: path.join(scratch, 'postgres'),
      logFile: path.join(scratch, 'postgres.log'),
      persistent: false,
      portHint: 'set TEST_DATABASE_ADMIN_URL to a running server',
      say,
    },
  });
  if (postgres.kind === 'embedded') say(`no PostgreSQL on 127.0.0.1:5432: the tests use an embedded one (${postgres.adminUrl})`);
  process.env.TEST_DATABASE_ADMIN_URL = postgres.adminUrl;
  const nats = await findNats({
    natsUrl: process.env.NATS_URL,
    port: await findFreePort(),
    storeDir: path.join(scratch, 'nats'),
    logFile: path.join(scratch, 'nats.log'),
    portHint: 'set NATS_URL to a running JetStream broker',
    say,
  });
  if (nats.kind === 'started') say(`no NATS on 127.0.0.1:4222: the tests use the pinned nats-server on ${nats.url}`);
  process.env.NATS_URL = nats.url;
  return { temporalCli, chromiumPath, promtoolPath, redisServerPath, postgres, nats };
}

/**
 * One real Temporal dev server and one workflow bundle for the whole run; every test file
 * brings its own database, emulator, task queue and worker, so files run side by side.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'order-payments-test-run-'));
  let tools: Awaited<ReturnType<typeof bootstrap>>;
  try {
    tools = await bootstrap(scratch);
  } catch (error) {
    await rm(scratch, { recursive: true, force: true });
    if (!(error instanceof BootstrapError)) throw error;
    console.error(`test setup: ${oneLine(error)}`);
    process.exit(2);
  }
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: tools.temporalCli },
      searchAttributes: ORDER_SEARCH_ATTRIBUTES,
      ip: '127.0.0.1',
      ui: false,
      extraArgs: ['--log-level', 'error', ...DEV_SERVER_DYNAMIC_CONFIG],
    },
  });
  // Test workers run the traced bundle, so those given TRACE_FILE trace the workflow too.
  const bundles = await writeWorkflowBundles(path.join(scratch, 'bundles'));

  project.provide('temporalAddress', env.address);
  project.provide('temporalCli', tools.temporalCli);
  project.provide('workflowBundlePath', bundles.traced);
  project.provide('untracedWorkflowBundlePath', bundles.untraced);
  project.provide('workflowBuildId', bundles.buildId);
  project.provide('chromiumPath', tools.chromiumPath);
  project.provide('promtoolPath', tools.promtoolPath);
  project.provide('redisServerPath', tools.redisServerPath);

  return async () => {
    await env.teardown();
    await tools.nats.stop();
    await tools.postgres.stop();
    await rm(scratch, { recursive: true, force: true });
  };
}

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { bundleWorkflows } from '../src/temporal/bundle-workflows.js';
import { resolveTemporalCli } from '../src/temporal/cli-path.js';
import { ORDER_SEARCH_ATTRIBUTES } from '../src/temporal/search-attributes.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalCli: string;
    workflowBundlePath: string;
  }
}

/**
 * One real Temporal dev server and one workflow bundle for the whole run; every test file
 * brings its own database, emulator, task queue and worker, so files run side by side.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const temporalCli = resolveTemporalCli();
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: temporalCli },
      searchAttributes: ORDER_SEARCH_ATTRIBUTES,
      ip: '127.0.0.1',
      ui: false,
      extraArgs: ['--log-level', 'error'],
    },
  });
  const bundleDir = await mkdtemp(path.join(os.tmpdir(), 'order-payments-bundle-'));
  const workflowBundlePath = await bundleWorkflows(path.join(bundleDir, 'workflow-bundle.js'));

  project.provide('temporalAddress', env.address);
  project.provide('temporalCli', temporalCli);
  project.provide('workflowBundlePath', workflowBundlePath);

  return async () => {
    await env.teardown();
    await rm(bundleDir, { recursive: true, force: true });
  };
}

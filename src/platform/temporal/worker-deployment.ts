// Who a worker is under Worker Deployment Versioning: its deployment name, its build ID (made from
// the workflow code it runs) and how it is rolled out; and the worker options that say so.
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { WorkerDeploymentOptions } from '@temporalio/worker';
import { z } from 'zod';
import { ConfigError } from '../config/config-error.js';

/** A version of the worker deployment: the name all its builds share, and this build's ID. */
export interface WorkerDeployment {
  deploymentName: string;
  buildId: string;
}

/**
 * `auto`: the worker makes its own build the deployment's current version when it starts, so a
 * developer's restart routes new orders to the code just edited. `manual`: it only polls, and an
 * operator moves traffic with `npm run deploy` (set-current, ramp). Production is manual.
 */
export type Rollout = 'auto' | 'manual';

export interface WorkerDeploymentSettings {
  deploymentName: string;
  /** WORKER_BUILD_ID: set by CI/CD to name the build itself; unset, the workflow bundle's hash. */
  buildIdOverride: string | undefined;
  rollout: Rollout;
}

export const DEFAULT_DEPLOYMENT_NAME = 'order-payments';

const deploymentSchema = z.object({
  WORKER_DEPLOYMENT_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, "must be 1-100 letters, digits, '-' or '_' (e.g. order-payments)")
    .default(DEFAULT_DEPLOYMENT_NAME),
  WORKER_BUILD_ID: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,100}$/, "must be 1-100 letters, digits, '.', '-' or '_' (e.g. a git SHA)")
    .optional(),
  WORKER_ROLLOUT: z.enum(['auto', 'manual'], { error: "must be 'auto' (become current on start) or 'manual' (npm run deploy moves traffic)" }).optional(),
});

/** The deployment settings from the environment; rollout defaults to manual in production, auto elsewhere. */
export function loadWorkerDeploymentSettings(env: NodeJS.ProcessEnv = process.env): WorkerDeploymentSettings {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''));
  const parsed = deploymentSchema.safeParse(present);
  if (!parsed.success) throw ConfigError.fromZod(parsed.error);
  return {
    deploymentName: parsed.data.WORKER_DEPLOYMENT_NAME,
    buildIdOverride: parsed.data.WORKER_BUILD_ID,
    rollout: parsed.data.WORKER_ROLLOUT ?? (env.NODE_ENV === 'production' ? 'manual' : 'auto'),
  };
}

const PROJECT_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * The build ID of a workflow bundle: a hash of its code, so it changes exactly when the workflow
 * code (or an SDK it bundles) changes. The inline source map and the checkout's absolute path are
 * left out, so every clone of one commit, in any folder, from src/ or from dist/, is one build.
 * Always the bundle without the tracing interceptors: they issue no commands (the replay tests
 * prove it), so a traced and an untraced worker of one commit are one build.
 */
export function workflowBuildIdOf(untracedBundleCode: string, root: string = PROJECT_ROOT): string {
  const withoutMap = untracedBundleCode.replace(/\n\/\/# sourceMappingURL=\S*\s*$/, '');
  const portable = withoutMap.replaceAll(root.replace(/\/$/, ''), '<root>');
  return createHash('sha256').update(portable).digest('hex').slice(0, 12);
}

/**
 * The worker options of a deployment version. Workflows are PINNED unless they say otherwise
 * (src/workflows/): a run finishes on the build that started it, so a change to the saga's
 * commands ships as a new build instead of a patch branch in the workflow code.
 */
export function workerDeploymentOptions(deployment: WorkerDeployment): WorkerDeploymentOptions {
  return { version: deployment, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' };
}

/** How a version is named in the CLI and in visibility (`TemporalWorkerDeploymentVersion`). */
export function versionName({ deploymentName, buildId }: WorkerDeployment): string {
  return `${deploymentName}:${buildId}`;
}

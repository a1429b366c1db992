// The rollout of a worker deployment over Temporal's workflow service: where new runs go (the
// current and ramping versions), moving them, and whether an old build still has pinned runs.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { versionName, type WorkerDeployment } from '../../platform/temporal/worker-deployment.js';

// CommonJS: a default import under node's ESM loader (the compiled worker), not named exports.
const { VersionDrainageStatus, WorkerDeploymentVersionStatus, RoutingConfigUpdateState } = proto.temporal.api.enums.v1;

export type VersionRouting = 'current' | 'ramping' | 'draining' | 'drained' | 'inactive';

export interface VersionState {
  buildId: string;
  routing: VersionRouting;
  /** Open runs pinned to this build, from visibility. */
  openPinnedRuns: number;
}

export interface DeploymentState {
  deploymentName: string;
  current: string | null;
  ramping: { buildId: string; percentage: number } | null;
  versions: VersionState[];
}

const ROUTING_OF: Partial<Record<proto.temporal.api.enums.v1.WorkerDeploymentVersionStatus, VersionRouting>> = {
  [WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT]: 'current',
  [WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING]: 'ramping',
  [WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING]: 'draining',
  [WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED]: 'drained',
};

/** A deployment Temporal has never seen a worker of: nothing routes anywhere yet. */
export class UnknownDeploymentError extends Error {
  override readonly name = 'UnknownDeploymentError';
}

/** Open runs pinned to the version: what keeps its workers needed. */
export async function openPinnedRuns(client: Client, version: WorkerDeployment): Promise<number> {
  const query = `TemporalWorkerDeploymentVersion = '${versionName(version)}' AND TemporalWorkflowVersioningBehavior = 'Pinned' AND ExecutionStatus = 'Running'`;
  return (await client.workflow.count(query)).count;
}

async function describe(client: Client, deploymentName: string) {
  try {
    const { workerDeploymentInfo } = await client.workflowService.describeWorkerDeployment({ namespace: client.options.namespace, deploymentName });
    return workerDeploymentInfo ?? null;
  } catch (error) {
    if (isGrpcCode(error, 5)) return null; // NOT_FOUND
    throw error;
  }
}

/** Where new runs of the deployment go, and every build it has seen with its open pinned runs. */
export async function describeDeployment(client: Client, deploymentName: string): Promise<DeploymentState> {
  const info = await describe(client, deploymentName);
  if (!info) throw new UnknownDeploymentError(`no worker of deployment '${deploymentName}' has polled namespace '${client.options.namespace}' yet`);
  const routing = info.routingConfig;
  const current = routing?.currentDeploymentVersion?.buildId || null;
  const rampingBuild = routing?.rampingDeploymentVersion?.buildId || null;
  const versions = await Promise.all(
    (info.versionSummaries ?? []).map(async (summary): Promise<VersionState> => {
      const buildId = summary.deploymentVersion?.buildId ?? '';
      return {
        buildId,
        routing: ROUTING_OF[summary.status ?? WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE] ?? 'inactive',
        openPinnedRuns: await openPinnedRuns(client, { deploymentName, buildId }),
      };
    }),
  );
  return {
    deploymentName,
    current,
    ramping: rampingBuild ? { buildId: rampingBuild, percentage: routing?.rampingVersionPercentage ?? 0 } : null,
    versions: versions.sort((a, b) => a.buildId.localeCompare(b.buildId)),
  };
}

/**
 * Waits until the routing change has reached every task queue of the deployment: until then, a
 * run started right after the call can still go to the previous version.
 */
async function routingSettled(client: Client, deploymentName: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = (await describe(client, deploymentName))?.routingConfigUpdateState;
    if (state !== RoutingConfigUpdateState.ROUTING_CONFIG_UPDATE_STATE_IN_PROGRESS) return;
    if (Date.now() > deadline) throw new Error(`the routing change of deployment '${deploymentName}' has not reached every task queue after ${timeoutMs} ms`);
    await sleep(200);
  }
}

/** gRPC codes of a routing change the server could not apply just now, and will on a retry. */
const TRANSIENT_CODES = new Set([8 /* RESOURCE_EXHAUSTED */, 10 /* ABORTED */, 14 /* UNAVAILABLE */]);
const ROUTING_CHANGE_ATTEMPTS = 10;

/**
 * The server applies a routing change through its deployment's own internal workflow, which
 * refuses updates for a moment while it closes a run and continues as new ("workflow is
 * closing", RESOURCE_EXHAUSTED). Setting the same version and percentage again is idempotent,
 * so such a refusal is retried; any other error is not.
 */
async function retryTransient<T>(change: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await change();
    } catch (error) {
      const transient = TRANSIENT_CODES.has((error as { code?: unknown }).code as number);
      if (!transient || attempt >= ROUTING_CHANGE_ATTEMPTS) throw error;
      await sleep(Math.min(200 * 2 ** (attempt - 1), 2_000));
    }
  }
}

/** Makes the build the current version: every new run starts on it (a ramp, if any, is cleared). */
export async function setCurrentVersion(client: Client, version: WorkerDeployment, identity: string): Promise<void> {
  await retryTransient(() =>
    client.workflowService.setWorkerDeploymentCurrentVersion({
      namespace: client.options.namespace,
      deploymentName: version.deploymentName,
      buildId: version.buildId,
      identity,
    }),
  );
  await routingSettled(client, version.deploymentName);
}

/** Sends `percentage` of new runs to the build, the rest to the current version; 0 ends the ramp. */
export async function setRampingVersion(client: Client, version: WorkerDeployment, percentage: number, identity: string): Promise<void> {
  await retryTransient(() =>
    client.workflowService.setWorkerDeploymentRampingVersion({
      namespace: client.options.namespace,
      deploymentName: version.deploymentName,
      buildId: percentage === 0 ? '' : version.buildId,
      percentage,
      identity,
    }),
  );
  await routingSettled(client, version.deploymentName);
}

export interface Drainage {
  drained: boolean;
  /** One line saying why (not) drained. */
  reason: string;
  openPinnedRuns: number;
  /** What the server's own drainage check last said. */
  serverStatus: 'draining' | 'drained' | 'unknown';
}

/**
 * Whether the build's workers can be switched off: no new run goes to it (neither current nor
 * ramping) and no run pinned to it is open, by visibility now and by the server's own check.
 */
export async function drainage(client: Client, version: WorkerDeployment): Promise<Drainage> {
  const state = await describeDeployment(client, version.deploymentName);
  const openRuns = await openPinnedRuns(client, version);
  const { workerDeploymentVersionInfo } = await client.workflowService.describeWorkerDeploymentVersion({
    namespace: client.options.namespace,
    deploymentVersion: version,
  });
  const status = workerDeploymentVersionInfo?.drainageInfo?.status;
  const serverStatus =
    status === VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED ? 'drained' : status === VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINING ? 'draining' : 'unknown';
  const name = `build ${version.buildId}`;
  if (state.current === version.buildId) return { drained: false, reason: `${name} is the current version: new runs start on it`, openPinnedRuns: openRuns, serverStatus };
  if (state.ramping?.buildId === version.buildId) {
    return { drained: false, reason: `${name} is ramping: ${state.ramping.percentage}% of new runs start on it`, openPinnedRuns: openRuns, serverStatus };
  }
  if (openRuns > 0) return { drained: false, reason: `${name} still has ${openRuns} open pinned run(s)`, openPinnedRuns: openRuns, serverStatus };
  if (serverStatus === 'draining') {
    return { drained: false, reason: `${name} has no open pinned run in visibility, but the server's last drainage check still saw one`, openPinnedRuns: 0, serverStatus };
  }
  return { drained: true, reason: `${name} is drained: no new run goes to it and none pinned to it is open`, openPinnedRuns: 0, serverStatus };
}

export interface BecameCurrent {
  /** The build that was current before, if another. */
  replaced: string | null;
  /** Open runs pinned to the replaced build: they finish only on a worker of that build. */
  strandedRuns: number;
}

/**
 * A development worker's start (`WORKER_ROLLOUT=auto`): makes its build current once it polls, so
 * a restart with edited workflow code routes new runs to the new code. Runs pinned to the build
 * it replaces stay pinned there; the caller says so. Unchanged code is the same build: nothing moves.
 */
export async function becomeCurrent(client: Client, version: WorkerDeployment, identity: string, timeoutMs = 30_000): Promise<BecameCurrent> {
  const before = await describe(client, version.deploymentName);
  const previous = before?.routingConfig?.currentDeploymentVersion?.buildId || null;
  if (previous === version.buildId) return { replaced: null, strandedRuns: 0 };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await setCurrentVersion(client, version, identity);
      break;
    } catch (error) {
      // The server has not yet seen this build's pollers, or a concurrent change won the race.
      if (Date.now() > deadline || !(isGrpcCode(error, 5) || isGrpcCode(error, 9) || isGrpcCode(error, 10))) throw error;
      await sleep(250);
    }
  }
  const strandedRuns = previous ? await openPinnedRuns(client, { deploymentName: version.deploymentName, buildId: previous }) : 0;
  return { replaced: previous, strandedRuns };
}

function isGrpcCode(error: unknown, code: number): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && (error as { code: unknown }).code === code;
}

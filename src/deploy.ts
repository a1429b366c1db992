// The rollout command (`npm run deploy -- status | set-current <build> | ramp <build> <percent> |
// drained <build>`): moves new orders between worker builds and says when an old one can go.
import { Client, Connection } from '@temporalio/client';
import { Command, InvalidArgumentError } from 'commander';
import { exitWhenDone } from './platform/config/cli-exit.js';
import { loadAll } from './platform/config/settings.js';
import { loadTemporalConnectConfig } from './platform/temporal/connection-config.js';
import { dataConverterFor } from './platform/temporal/payload-encryption/data-converter.js';
import { loadPayloadEncryptionSettings } from './platform/temporal/payload-encryption/settings.js';
import { loadWorkerDeploymentSettings } from './platform/temporal/worker-deployment.js';
import {
  describeDeployment,
  drainage,
  setCurrentVersion,
  setRampingVersion,
  UnknownDeploymentError,
  type DeploymentState,
} from './operations/deploy/deployment-routing.js';

/** Exit codes a pipeline can branch on. */
const Exit = { ok: 0, notDrained: 1, badConfig: 2, failed: 3 } as const;

const IDENTITY = `npm run deploy (${process.env.USER ?? 'operator'})`;

const buildIdArgument = (value: string): string => {
  if (!/^[A-Za-z0-9_.-]{1,100}$/.test(value)) throw new InvalidArgumentError("a build ID is 1-100 letters, digits, '.', '-' or '_' (npm run deploy -- status lists them)");
  return value;
};

const percentArgument = (value: string): number => {
  const percent = Number(value);
  if (!Number.isFinite(percent) || percent < 0 || percent > 100) throw new InvalidArgumentError('the ramp is a percentage from 0 to 100 (0 ends the ramp)');
  return percent;
};

function formatState(state: DeploymentState): string {
  const lines = [
    `deployment ${state.deploymentName}`,
    `  current  ${state.current ?? '(none: new runs wait for a current version)'}`,
    `  ramping  ${state.ramping ? `${state.ramping.buildId} at ${state.ramping.percentage}%` : '(none)'}`,
    '  builds:',
    ...state.versions.map((version) => `    ${version.buildId.padEnd(14)} ${version.routing.padEnd(9)} ${version.openPinnedRuns} open pinned run(s)`),
  ];
  return lines.join('\n');
}

async function withClient<T>(run: (client: Client, deploymentName: string) => Promise<T>): Promise<T> {
  const settings = loadAll({ connect: loadTemporalConnectConfig, deployment: loadWorkerDeploymentSettings, encryption: loadPayloadEncryptionSettings });
  const connection = await Connection.connect(settings.connect.connectionOptions);
  try {
    return await run(new Client({ connection, namespace: settings.connect.namespace, dataConverter: dataConverterFor(settings.encryption) }), settings.deployment.deploymentName);
  } catch (error) {
    if (error instanceof UnknownDeploymentError) throw new Error(`${error.message}: start a worker of it first`);
    throw error;
  } finally {
    await connection.close();
  }
}

const program = new Command('deploy')
  .description(
    'Roll out a new worker build: make it current, ramp it, roll back, and know when an old build can be switched off.\n' +
      'Reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE (or a temporal.toml profile) and WORKER_DEPLOYMENT_NAME (default order-payments).\n' +
      'Exit codes: 0 done (drained: the build is drained), 1 not drained, 2 bad arguments or configuration, 3 the change could not be made.',
  )
  .option('--json', 'print one JSON object instead of text', false)
  .exitOverride((error) => process.exit(error.exitCode === 0 ? Exit.ok : Exit.badConfig))
  .configureOutput({ writeErr: (text) => process.stderr.write(`deploy: ${text}`) });

let exitCode: number = Exit.badConfig;
const json = () => program.opts<{ json: boolean }>().json;

program
  .command('status')
  .description('where new runs go, and every build with its open pinned runs')
  .action(async () => {
    exitCode = await withClient(async (client, deploymentName) => {
      const state = await describeDeployment(client, deploymentName);
      console.log(json() ? JSON.stringify(state) : formatState(state));
      return Exit.ok;
    });
  });

program
  .command('set-current')
  .argument('<build>', 'the build ID (a worker logs its own on its first line)', buildIdArgument)
  .description('send every new run to this build; also the rollback: set the previous build current again')
  .action(async (buildId: string) => {
    exitCode = await withClient(async (client, deploymentName) => {
      await setCurrentVersion(client, { deploymentName, buildId }, IDENTITY);
      console.log(json() ? JSON.stringify({ deploymentName, current: buildId }) : `build ${buildId} is current: new runs of ${deploymentName} start on it; runs in flight stay on their builds`);
      return Exit.ok;
    });
  });

program
  .command('ramp')
  .argument('<build>', 'the build ID to ramp', buildIdArgument)
  .argument('<percent>', 'the share of new runs it gets, 0-100 (0 ends the ramp)', percentArgument)
  .description('send a share of new runs to this build, the rest to the current one')
  .action(async (buildId: string, percent: number) => {
    exitCode = await withClient(async (client, deploymentName) => {
      await setRampingVersion(client, { deploymentName, buildId }, percent, IDENTITY);
      console.log(json() ? JSON.stringify({ deploymentName, ramping: buildId, percent }) : percent === 0 ? 'the ramp is over: every new run starts on the current build' : `build ${buildId} is ramping: ${percent}% of new runs start on it`);
      return Exit.ok;
    });
  });

program
  .command('drained')
  .argument('<build>', 'the build ID to check', buildIdArgument)
  .description('exit 0 once no new run goes to this build and none pinned to it is open: its workers can be stopped')
  .action(async (buildId: string) => {
    exitCode = await withClient(async (client, deploymentName) => {
      const result = await drainage(client, { deploymentName, buildId });
      console.log(json() ? JSON.stringify({ deploymentName, buildId, ...result }) : result.reason);
      return result.drained ? Exit.ok : Exit.notDrained;
    });
  });

exitWhenDone('deploy', program.parseAsync().then(() => exitCode), { badConfig: Exit.badConfig, failed: Exit.failed }, 'the change could not be made');

// A throwaway in-memory Temporal dev server with the project's search attributes, started from
// the local `temporal` CLI for chaos and soak runs.
import { dataConverterFor } from '../../platform/temporal/payload-encryption/data-converter.js';
import { loadPayloadEncryptionSettings } from '../../platform/temporal/payload-encryption/settings.js';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { resolveTemporalCli } from '../../platform/temporal/cli-path.js';
import { DEV_SERVER_DYNAMIC_CONFIG } from '../../platform/temporal/dev-server-settings.js';
import { ORDER_SEARCH_ATTRIBUTES } from '../../platform/temporal/search-attributes.js';

export interface DevServer {
  /** gRPC address, for workers and the `temporal` CLI. */
  address: string;
  /** The `temporal` binary the server runs from; the CLI commands use it too. */
  cli: string;
  client: Client;
  nativeConnection: NativeConnection;
  stop(): Promise<void>;
}

/**
 * A throwaway Temporal dev server (in memory, headless, on a free port) with the project's
 * search attributes, from the `temporal` CLI this machine already has: nothing is downloaded.
 */
export async function startDevServer(): Promise<DevServer> {
  const cli = resolveTemporalCli();
  const env = await TestWorkflowEnvironment.createLocal({
    // The same keys as the worker processes it runs, which read the same environment.
    client: { dataConverter: dataConverterFor(loadPayloadEncryptionSettings()) },
    server: {
      executable: { type: 'existing-path', path: cli },
      searchAttributes: ORDER_SEARCH_ATTRIBUTES,
      ip: '127.0.0.1',
      ui: false,
      // Its own overload complaints (SQLite timeouts) would drown the run's output; runs that
      // fail show up in the results.
      extraArgs: ['--log-level', 'never', ...DEV_SERVER_DYNAMIC_CONFIG],
    },
  });
  return {
    address: env.address,
    cli,
    client: env.client,
    nativeConnection: env.nativeConnection,
    stop: () => env.teardown(),
  };
}

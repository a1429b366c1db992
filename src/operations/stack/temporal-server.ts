// Runs `temporal server start-dev` for the local stack with the project's search attributes, and
// waits until its namespace and Web UI answer.
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { DEV_SERVER_DYNAMIC_CONFIG } from '../../platform/temporal/dev-server-settings.js';
import { spawnManaged, type ManagedProcess } from './child-process.js';

export interface TemporalServerOptions {
  cli: string;
  port: number;
  /** The Web UI's port; null runs the server headless. */
  uiPort: number | null;
  /** SQLite file that keeps runs across restarts; null keeps them in memory. */
  databaseFile: string | null;
  namespace: string;
  /** Where the Web UI sends payloads to decode (--ui-codec-endpoint); unset: it shows them encoded. */
  uiCodecEndpoint?: string;
  logFile: string;
  /** How long to wait for the server to answer. Default 60 s. */
  readyTimeoutMs?: number;
}

export interface RunningTemporalServer {
  /** gRPC address, `127.0.0.1:7233`. */
  address: string;
  /** Web UI base URL, or null when headless. */
  uiUrl: string | null;
  process: ManagedProcess;
  stop(): Promise<void>;
}

/**
 * `temporal server start-dev` with the project's search attributes registered, bound to the
 * loopback interface. Resolves once the namespace answers over gRPC and the UI over HTTP.
 */
export async function startTemporalServer(options: TemporalServerOptions): Promise<RunningTemporalServer> {
  const ip = '127.0.0.1';
  const args = [
    'server',
    'start-dev',
    '--ip',
    ip,
    '--port',
    String(options.port),
    '--namespace',
    options.namespace,
    '--search-attribute',
    'OrderId=Keyword',
    '--search-attribute',
    'OrderStatus=Keyword',
    '--log-level',
    'warn',
    ...DEV_SERVER_DYNAMIC_CONFIG,
    ...(options.uiPort === null ? ['--headless'] : ['--ui-port', String(options.uiPort), '--ui-disable-news-fetch']),
    ...(options.databaseFile === null ? [] : ['--db-filename', options.databaseFile]),
    ...(options.uiCodecEndpoint === undefined ? [] : ['--ui-codec-endpoint', options.uiCodecEndpoint]),
  ];
  const server = spawnManaged({ name: 'Temporal dev server', file: options.cli, args, logFile: options.logFile });
  const address = `${ip}:${options.port}`;
  const uiUrl = options.uiPort === null ? null : `http://${ip}:${options.uiPort}`;
  const giveUp = new AbortController();
  try {
    await Promise.race([
      waitUntilReady(address, options.namespace, uiUrl, options.readyTimeoutMs ?? 60_000, giveUp.signal),
      server.exited.then((how) => {
        throw new Error(`${how} before it was ready; see ${options.logFile}`);
      }),
    ]);
  } catch (error) {
    await server.stop();
    throw error;
  } finally {
    giveUp.abort();
  }
  return { address, uiUrl, process: server, stop: () => server.stop() };
}

async function waitUntilReady(
  address: string,
  namespace: string,
  uiUrl: string | null,
  timeoutMs: number,
  stopped: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastProblem = 'no answer yet';
  while (Date.now() < deadline && !stopped.aborted) {
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await connection.workflowService.describeNamespace({ namespace });
      } finally {
        await connection.close();
      }
      if (uiUrl !== null) {
        const response = await fetch(uiUrl, { signal: AbortSignal.timeout(2_000) });
        if (!response.ok) throw new Error(`Web UI answered ${response.status}`);
      }
      return;
    } catch (error) {
      lastProblem = error instanceof Error ? error.message : String(error);
    }
    await sleep(250);
  }
  throw new Error(`the Temporal dev server at ${address} was not ready after ${timeoutMs / 1000} s: ${lastProblem}`);
}

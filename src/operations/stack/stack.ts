// Brings up the whole local stack in order (PostgreSQL, Temporal, the Stripe emulator, migrations,
// a worker, NATS, the API, the outbox dispatcher, receipts) and stops it in reverse.
import { randomBytes } from 'node:crypto';
import { migrate } from '../../platform/db/migrate.js';
import { createPool } from '../../platform/db/pool.js';
import { startStripeEmulator } from '@order-payments/stripe-emulator';
import { stackFiles } from './paths.js';
import { startNats } from './nats.js';
import { assertPortFree } from './ports.js';
import { startPostgres } from './postgres.js';
import { seedSampleStock } from './sample-stock.js';
import { serviceLogins, type ServiceUrls } from './database-roles.js';
import { probeRunningStack, removeStackState, writeStackState, type StackState } from './stack-state.js';
import { startServiceProcess } from './service-process.js';
import { PORT_HINTS, type StackOptions } from './stack-options.js';
import { startTemporalServer } from './temporal-server.js';
import { startWorkerProcess } from './worker-process.js';
import { ensureTemporalCli } from '../../platform/tools/bootstrap.js';
import { ensurePrivateDir } from '../../platform/tools/private-files.js';

/** Any sk_test_ key works with the emulator; the stack, its worker and the demo share this one. */
export const STACK_STRIPE_KEY = 'sk_test_order_payments_local_stack';
const NAMESPACE = 'default';
const TASK_QUEUE = 'order-payments';

export interface RunningStack {
  state: StackState;
  /** The worker's and the starter's configuration for this stack. */
  env: Record<string, string>;
  postgresDataDir: string | null;
  /** The state file (.data/stack.json, 0600), which holds the stack's secrets. */
  stateFile: string;
  /** The worker's and the API's local trace store (`npm run trace -- --order-id ID --file <it>`). */
  traces: string;
  /** Log file by part; null for a part the stack did not start itself. */
  logs: Record<string, string | null>;
  /** Settles when a part of the stack ends by itself, saying which and how. */
  failed: Promise<string>;
  /** Stops the parts in the reverse order of their start: the message side first, PostgreSQL last. */
  stop(): Promise<void>;
}

export interface StartStackOptions extends StackOptions {
  say: (line: string) => void;
}

type Stopper = { name: string; stop: () => Promise<void> };

/**
 * Brings up the whole local stack in order: PostgreSQL, the Temporal dev server and the Stripe
 * emulator side by side, then migrations, then a worker process, then the message side: NATS,
 * the API (registered with the emulator as the webhook endpoint), the outbox dispatcher and the
 * receipts consumer. A part that fails to start stops every part started before it.
 */
export async function startStack(options: StartStackOptions): Promise<RunningStack> {
  const files = stackFiles(options.dataDir);
  // Its secrets live here (0600 files); a data folder of someone else's, or open to others, is refused.
  await ensurePrivateDir(options.dataDir, "the stack's state and secrets");
  const existing = await probeRunningStack(files.stateFile);
  if (existing.running) {
    throw new Error(`a stack is already running from ${options.dataDir} (pid ${existing.state.pid}): use it, or stop it first`);
  }
  await assertPortFree(options.temporalPort, 'Temporal gRPC', PORT_HINTS.temporal);
  await assertPortFree(options.uiPort, 'Temporal Web UI', PORT_HINTS.ui);
  await assertPortFree(options.emulatorPort, 'Stripe emulator', PORT_HINTS.emulator);
  await assertPortFree(options.apiPort, 'API', PORT_HINTS.api);
  await assertPortFree(options.codecPort, 'codec server', PORT_HINTS.codec);
  const cli = await ensureTemporalCli(options.say);

  const started: Stopper[] = [];
  const stopAll = async () => {
    for (const part of started.reverse()) {
      await part.stop().catch((error: unknown) => {
        options.say(`could not stop ${part.name}: ${error instanceof Error ? error.message : String(error)}`);
      });
    }
    started.length = 0;
  };

  // The Web UI decodes payloads through the codec server. The dev server's UI cannot send a
  // header, so in development the token rides in the endpoint's path (docs/encryption.md).
  const codecServerToken = randomBytes(24).toString('hex');
  const codecServerUrl = `http://127.0.0.1:${options.codecPort}`;
  try {
    options.say('starting PostgreSQL, the Temporal dev server and the Stripe emulator');
    const starting = [
      startPostgres({
        databaseUrl: options.databaseUrl,
        embeddedOnly: options.embeddedPostgres,
        port: options.postgresPort,
        embeddedDataDir: files.postgresData,
        passwordFile: files.postgresPassword,
        logFile: files.postgresLog,
        say: options.say,
      }),
      startTemporalServer({
        cli,
        port: options.temporalPort,
        uiPort: options.uiPort,
        databaseFile: files.temporalDatabase,
        namespace: NAMESPACE,
        uiCodecEndpoint: `${codecServerUrl}/ui/${codecServerToken}`,
        logFile: files.temporalLog,
      }),
      startStripeEmulator({ port: options.emulatorPort, host: '127.0.0.1' }),
    ] as const;
    // Side by side to save time; every part that did start is recorded for the shutdown,
    // even when another one failed.
    const [postgresStart, temporalStart, emulatorStart] = await Promise.allSettled(starting);
    if (postgresStart.status === 'fulfilled') started.push({ name: 'PostgreSQL', stop: () => postgresStart.value.stop() });
    if (temporalStart.status === 'fulfilled') started.push({ name: 'the Temporal dev server', stop: () => temporalStart.value.stop() });
    if (emulatorStart.status === 'fulfilled') started.push({ name: 'the Stripe emulator', stop: () => emulatorStart.value.close() });
    const [postgres, temporal, emulator] = await Promise.all(starting);

    const pool = createPool({ connectionString: postgres.url, max: 2, applicationName: 'order-payments-stack' });
    let serviceUrls: ServiceUrls;
    try {
      const { applied } = await migrate(pool);
      options.say(`migrations: ${applied.length === 0 ? 'up to date' : `applied ${applied.join(', ')}`}`);
      await seedSampleStock(pool);
      // Each service as its own login, granted only what it needs (migration 017).
      serviceUrls = await serviceLogins(pool, postgres.url, options.say);
    } finally {
      await pool.end();
    }

    const uiUrl = temporal.uiUrl ?? `http://127.0.0.1:${options.uiPort}`;
    const env = {
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: NAMESPACE,
      TEMPORAL_TASK_QUEUE: TASK_QUEUE,
      TEMPORAL_UI_URL: uiUrl,
      DATABASE_URL: postgres.url,
      STRIPE_SECRET_KEY: STACK_STRIPE_KEY,
      STRIPE_API_BASE: emulator.url,
    };
    options.say('starting the worker (it bundles the workflow code first)');
    const worker = await startWorkerProcess({
      env: { ...env, DATABASE_URL: serviceUrls.worker, TRACE_FILE: files.traces },
      logFile: files.workerLog,
      say: options.say,
    });
    started.push({ name: 'the worker', stop: () => worker.stop() });

    const nats = await startNats({
      natsUrl: options.natsUrl,
      port: options.natsPort,
      storeDir: files.natsData,
      streamIdFile: files.natsStreamId,
      credentialsDir: files.natsCredentials,
      databaseUrl: postgres.url,
      logFile: files.natsLog,
      portHint: PORT_HINTS.nats,
      say: options.say,
    });
    started.push({ name: 'NATS', stop: () => nats.stop() });

    // The emulator signs its deliveries with this secret and the API verifies them with it.
    const stripeWebhookSecret = `whsec_${randomBytes(24).toString('base64url')}`;
    const apiUrl = `http://127.0.0.1:${options.apiPort}`;
    options.say('starting the API, the outbox dispatcher and the receipts consumer');
    const api = await startServiceProcess({
      name: 'the API',
      entry: 'src/api.ts',
      env: {
        ...env,
        DATABASE_URL: serviceUrls.api,
        API_PORT: String(options.apiPort),
        API_HOST: '127.0.0.1',
        STRIPE_WEBHOOK_SECRET: stripeWebhookSecret,
        TRACE_FILE: files.traces,
      },
      logFile: files.apiLog,
      readyMessage: /^api listening on /,
      say: options.say,
    });
    started.push({ name: 'the API', stop: () => api.stop() });
    const codecServer = await startServiceProcess({
      name: 'the codec server',
      entry: 'src/codec-server.ts',
      env: {
        CODEC_SERVER_PORT: String(options.codecPort),
        CODEC_SERVER_HOST: '127.0.0.1',
        CODEC_SERVER_TOKEN: codecServerToken,
        CODEC_SERVER_CORS_ORIGINS: `${uiUrl},${uiUrl.replace('127.0.0.1', 'localhost')}`,
      },
      logFile: files.codecServerLog,
      readyMessage: /^codec server listening on /,
      say: options.say,
    });
    started.push({ name: 'the codec server', stop: () => codecServer.stop() });
    emulator.addWebhookEndpoint({ url: `${apiUrl}/webhooks/stripe`, secret: stripeWebhookSecret });

    const messagingEnv = {
      NATS_URL: nats.url,
      OUTBOX_STREAM: nats.stream,
      OUTBOX_SUBJECT_PREFIX: nats.subjectPrefix,
      // The same trace store: an order's trace goes on through the outbox publish and the receipt.
      TRACE_FILE: files.traces,
    };
    const consumers = [
      startServiceProcess({
        name: 'the outbox dispatcher',
        entry: 'src/outbox-dispatcher.ts',
        env: { ...messagingEnv, DATABASE_URL: serviceUrls.outbox, ...(nats.seedFiles && { NATS_NKEY_SEED_FILE: nats.seedFiles.outboxDispatcher }) },
        logFile: files.outboxLog,
        readyMessage: 'outbox dispatcher started',
        say: options.say,
      }),
      startServiceProcess({
        name: 'the receipts consumer',
        entry: 'src/receipts.ts',
        env: { ...messagingEnv, DATABASE_URL: serviceUrls.receipts, ...(nats.seedFiles && { NATS_NKEY_SEED_FILE: nats.seedFiles.receipts }) },
        logFile: files.receiptsLog,
        readyMessage: 'receipts consumer started',
        say: options.say,
      }),
    ] as const;
    const [dispatcherStart, receiptsStart] = await Promise.allSettled(consumers);
    if (dispatcherStart.status === 'fulfilled') started.push({ name: 'the outbox dispatcher', stop: () => dispatcherStart.value.stop() });
    if (receiptsStart.status === 'fulfilled') started.push({ name: 'the receipts consumer', stop: () => receiptsStart.value.stop() });
    const [dispatcher, receipts] = await Promise.all(consumers);

    const state: StackState = {
      pid: process.pid,
      startedAt: new Date().toISOString(),
      temporalAddress: temporal.address,
      namespace: NAMESPACE,
      taskQueue: TASK_QUEUE,
      uiUrl,
      databaseUrl: postgres.url,
      postgres: postgres.kind,
      emulatorUrl: emulator.url,
      stripeSecretKey: STACK_STRIPE_KEY,
      apiUrl,
      stripeWebhookSecret,
      natsUrl: nats.url,
      nats: nats.kind,
      outboxStream: nats.stream,
      outboxSubjectPrefix: nats.subjectPrefix,
      natsSeedFiles: nats.seedFiles,
      codecServerUrl,
      codecServerToken,
      services: { api: api.pid, outboxDispatcher: dispatcher.pid, receipts: receipts.pid },
    };
    await writeStackState(files.stateFile, state);

    let stopping: Promise<void> | null = null;
    return {
      state,
      env,
      postgresDataDir: postgres.dataDir,
      stateFile: files.stateFile,
      traces: files.traces,
      logs: {
        temporal: files.temporalLog,
        worker: files.workerLog,
        postgres: postgres.kind === 'embedded' ? files.postgresLog : null,
        nats: nats.kind === 'started' ? files.natsLog : null,
        api: files.apiLog,
        codecServer: files.codecServerLog,
        outbox: files.outboxLog,
        receipts: files.receiptsLog,
      },
      failed: Promise.race(
        [worker, temporal.process, nats.process, api, codecServer, dispatcher, receipts].filter((part) => part !== null).map((part) => part.exited),
      ),
      stop() {
        stopping ??= (async () => {
          await removeStackState(files.stateFile);
          await stopAll();
        })();
        return stopping;
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

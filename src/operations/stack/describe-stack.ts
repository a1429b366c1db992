// The environment the services need to use a running stack, and the description the stack prints:
// its addresses and the lines to paste into another shell.
import { SAMPLE_SKU } from './sample-stock.js';
import type { StackState } from './stack-state.js';

export interface StackDetails {
  postgresDataDir: string | null;
  /** The stack's state file (0600): the printed lines read its secrets from it rather than show them. */
  stateFile?: string;
  /** The worker's and the API's local trace store (TRACE_FILE), when the stack set one. */
  traces?: string;
  logs: Record<string, string | null>;
}

/** The configuration `npm run worker`, `npm run start`, `npm run api` and the message services need for this stack. */
export function stackEnv(state: StackState): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: state.temporalAddress,
    TEMPORAL_NAMESPACE: state.namespace,
    TEMPORAL_TASK_QUEUE: state.taskQueue,
    TEMPORAL_UI_URL: state.uiUrl,
    DATABASE_URL: state.databaseUrl,
    STRIPE_SECRET_KEY: state.stripeSecretKey,
    STRIPE_API_BASE: state.emulatorUrl,
    STRIPE_WEBHOOK_SECRET: state.stripeWebhookSecret,
    API_PORT: new URL(state.apiUrl).port,
    NATS_URL: state.natsUrl,
    OUTBOX_STREAM: state.outboxStream,
    OUTBOX_SUBJECT_PREFIX: state.outboxSubjectPrefix,
  };
}

const NATS_NOTES = { external: 'from NATS_URL', local: 'the server already on this machine', started: 'started by the stack' } as const;

const shellQuote = (value: string) => (/^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`);

/** The URL without its password, for the summary a person reads (and may paste into a ticket). */
function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

/** The state file's fields that are secrets: pasted as a read of the file, never printed. */
const SECRET_STATE_FIELDS: Partial<Record<string, keyof StackState>> = { DATABASE_URL: 'databaseUrl', STRIPE_WEBHOOK_SECRET: 'stripeWebhookSecret' };

/** The addresses, and the exact lines to paste into another shell. */
export function describeStack(state: StackState, details?: StackDetails, options: { exports: boolean } = { exports: true }): string {
  const postgresNote =
    state.postgres === 'embedded'
      ? `embedded${details?.postgresDataDir ? `, data in ${details.postgresDataDir}` : ''}`
      : state.postgres === 'local'
        ? 'the server on 127.0.0.1:5432'
        : 'from DATABASE_URL';
  const lines = [
    `  Temporal gRPC     ${state.temporalAddress}  (namespace ${state.namespace}, task queue ${state.taskQueue})`,
    `  Temporal Web UI   ${state.uiUrl}/namespaces/${state.namespace}/workflows`,
    `  PostgreSQL        ${withoutPassword(state.databaseUrl)}  (${postgresNote}; each service connects as a login of its own)`,
    `  Stripe emulator   ${state.emulatorUrl}  (faults and counters under ${state.emulatorUrl}/_emulator/)`,
    `  API               ${state.apiUrl}  (POST /webhooks/stripe, the emulator's webhook endpoint; GET /healthz)`,
    `  NATS JetStream    ${state.natsUrl}  (${NATS_NOTES[state.nats]}; stream ${state.outboxStream}, subjects ${state.outboxSubjectPrefix}.>)`,
    `  Message services  outbox dispatcher (pid ${state.services.outboxDispatcher}), receipts consumer (pid ${state.services.receipts})`,
    '  Worker builds     npm run deploy -- status  (each workflow-code change is a new build; the worker makes its own current on start)',
  ];
  if (state.codecServerUrl) {
    // The token is read from the state file, never printed.
    lines.push(
      `  Codec server      ${state.codecServerUrl}  (the Web UI decodes through it; the CLI: temporal workflow show -w ID --codec-endpoint ${state.codecServerUrl} --codec-auth "Bearer $(node -p 'require("${details?.stateFile ?? '.data/stack.json'}").codecServerToken')")`,
    );
  }
  if (state.natsSeedFiles) {
    lines.push(`  NATS keys         NATS_NKEY_SEED_FILE=${state.natsSeedFiles.outboxDispatcher} (dispatcher), ${state.natsSeedFiles.receipts} (receipts); no key, no entry`);
  }
  lines.push(
    '  Metrics           worker http://127.0.0.1:9464/metrics, API http://127.0.0.1:9465/metrics, outbox dispatcher http://127.0.0.1:9466/metrics, receipts http://127.0.0.1:9467/metrics',
  );
  if (details?.traces) lines.push(`  Traces            ${details.traces}  (one order's tree: npm run trace -- --order-id ID --file ${details.traces})`);
  if (details) {
    lines.push(
      `  Logs              ${Object.values(details.logs).filter((file) => file !== null).join(', ')}`,
    );
  }
  if (!options.exports) return lines.join('\n');
  const stateFile = details?.stateFile;
  const exports = Object.entries(stackEnv(state)).map(([name, value]) => {
    const field = SECRET_STATE_FIELDS[name];
    // The secret stays in the 0600 state file; the line reads it from there when pasted.
    if (stateFile && field) return `export ${name}="$(node -p 'require(${JSON.stringify(stateFile).replaceAll("'", '')}).${field}')"`;
    return `export ${name}=${shellQuote(value)}`;
  });
  return [
    ...lines,
    '',
    'For npm run start, npm run worker, npm run api and the message services in another shell, paste:',
    '',
    ...exports,
    '',
    'then, for example:',
    `  npm run start -- --order-id A-1001 --customer-id cust-42 --amount 1999 --currency usd --payment-method pm_card_visa --sku ${SAMPLE_SKU} --quantity 1 --wait`,
  ].join('\n');
}

/**
 * `npx tsx bench/api-orders.ts [--duration 10] [--connections 10] [--duplicates 0.1]`: POST
 * /v1/orders throughput with a share of retried Idempotency-Keys, driven by autocannon against
 * a real listening API, a throwaway database and a Temporal dev server. It measures the door
 * (authenticate, claim the key, start the workflow, answer 202 pending), not the
 * saga: no worker runs, so the machine's two cores serve only the API and its downstreams.
 * Afterwards it checks the contract held under load: one order per distinct key.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import autocannon from 'autocannon';
import { Command, InvalidArgumentError } from 'commander';
import pg from 'pg';
import { pino } from 'pino';
import { createApiKey } from '../src/api/auth/api-keys.js';
import { dataConverterFor } from '../src/platform/temporal/payload-encryption/data-converter.js';
import { loadPayloadEncryptionSettings } from '../src/platform/temporal/payload-encryption/settings.js';
import { buildApiServer } from '../src/api/server.js';
import { DEFAULT_API_IDEMPOTENCY } from '../src/api/idempotency/settings.js';
import { migrate } from '../src/platform/db/migrate.js';
import { createPool } from '../src/platform/db/pool.js';
import { resolveTemporalCli } from '../src/platform/temporal/cli-path.js';
import { DEV_SERVER_DYNAMIC_CONFIG } from '../src/platform/temporal/dev-server-settings.js';
import { ORDER_SEARCH_ATTRIBUTES } from '../src/platform/temporal/search-attributes.js';

const ADMIN_URL = process.env.BENCH_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const number = (flag: string, min: number, max: number) => (value: string) => {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < min || parsed > max) throw new InvalidArgumentError(`${flag} must be between ${min} and ${max}`);
  return parsed;
};

const program = new Command('api-orders')
  .description('POST /v1/orders throughput with a share of duplicate Idempotency-Keys (autocannon)')
  .option('--duration <seconds>', 'how long to load', number('--duration', 1, 600), 10)
  .option('--connections <n>', 'concurrent connections', number('--connections', 1, 500), 10)
  .option('--duplicates <share>', 'share of requests that retry an earlier key', number('--duplicates', 0, 0.9), 0.1);

const say = (line: string) => process.stderr.write(`bench api-orders: ${line}\n`);

async function main(): Promise<void> {
  const flags = program.parse().opts<{ duration: number; connections: number; duplicates: number }>();
  const dbName = `payments_bench_api_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${dbName}`;
  const db = createPool({ connectionString: url.toString(), max: 20, applicationName: 'bench-api-orders' });
  say('starting a Temporal dev server');
  const env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'existing-path', path: resolveTemporalCli() }, searchAttributes: ORDER_SEARCH_ATTRIBUTES, ip: '127.0.0.1', ui: false, extraArgs: ['--log-level', 'error', ...DEV_SERVER_DYNAMIC_CONFIG] },
  });
  const connection = await Connection.connect({ address: env.address });
  try {
    await migrate(db);
    const { key: apiKey } = await createApiKey(db, 'bench-tenant');
    const app = await buildApiServer({
      db,
      signalPaymentEvent: () => Promise.resolve('no-workflow' as const),
      stripeWebhook: { secrets: ['whsec_bench'], toleranceSeconds: 300 },
      logger: pino({ level: 'silent' }),
      temporal: { client: new Client({ connection, dataConverter: dataConverterFor(loadPayloadEncryptionSettings()) }), taskQueue: `bench-api-${randomUUID()}` },
      apiIdempotency: DEFAULT_API_IDEMPOTENCY,
      // No worker runs, so no outcome comes: answer 202 at once rather than wait for one.
      outcomeWaitMs: 0,
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const body = JSON.stringify({ customerId: 'cust-bench', amount: 1999, currency: 'usd', paymentMethod: 'pm_card_visa', sku: 'bench-sku', quantity: 1 });
    const used: string[] = [];
    let duplicatesSent = 0;

    say(`loading POST /v1/orders for ${flags.duration}s on ${flags.connections} connections, ${Math.round(flags.duplicates * 100)}% duplicate keys`);
    const result = await autocannon({
      url: `http://127.0.0.1:${port}`,
      connections: flags.connections,
      duration: flags.duration,
      requests: [
        {
          method: 'POST',
          path: '/v1/orders',
          setupRequest: (request) => {
            const retry = used.length > 0 && Math.random() < flags.duplicates;
            const key = retry ? (used[Math.floor(Math.random() * used.length)] ?? randomUUID()) : randomUUID();
            if (retry) duplicatesSent += 1;
            else used.push(key);
            return { ...request, body, headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, 'idempotency-key': key } };
          },
        },
      ],
    });
    // Requests cut off at the end may still be starting workflows: let them store their answers.
    for (let waited = 0; waited < 30_000; waited += 200) {
      const { rows: live } = await db.query<{ n: number }>(`select count(*)::int as n from api_idempotency where state = 'pending' and locked_until > now()`);
      if ((live[0]?.n ?? 0) === 0) break;
      await sleep(200);
    }
    await app.close();

    const { rows } = await db.query<{ keys: number; orders: number; completed: number }>(
      `select (select count(*)::int from api_idempotency) as keys, (select count(*)::int from api_orders) as orders,
              (select count(*)::int from api_idempotency where state = 'completed') as completed`,
    );
    const counts = rows[0] ?? { keys: 0, orders: 0, completed: 0 };
    const statuses = Object.entries(result.statusCodeStats ?? {})
      .map(([code, stat]) => `${code}: ${stat.count}`)
      .join(', ');
    console.log('| bench | req/s (mean) | latency p50 | p99 | requests | duplicates sent | status codes | distinct keys | orders |');
    console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    console.log(
      `| POST /v1/orders, ${Math.round(flags.duplicates * 100)}% duplicate keys, ${flags.connections} conns | ${result.requests.average.toFixed(0)} | ${result.latency.p50} ms | ${result.latency.p99} ms | ${result.requests.total} | ${duplicatesSent} | ${statuses} | ${counts.keys} | ${counts.orders} |`,
    );
    if (counts.orders !== counts.keys) {
      say(`CONTRACT BROKEN: ${counts.orders} orders for ${counts.keys} distinct keys`);
      process.exitCode = 1;
    }
    if (result.non2xx > 0) say(`${result.non2xx} non-2xx answers: 409s are duplicates that arrived while their first request held the key`);
  } finally {
    await connection.close();
    await env.teardown();
    await db.end();
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  console.error(`bench api-orders: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
  process.exit(1);
});

// Proves in a real Chromium that the Temporal Web UI tells a compensated run's story: labelled
// steps and compensations, idempotency keys in the history, the summary, and the search attributes,
// all decoded by the codec server the UI is pointed at (--ui-codec-endpoint); and that the same
// page shows only ciphertext once the codec server refuses.
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { listUrl, runUrl } from '../../src/operations/demo/web-ui-links.js';
import type { OrderInput } from '../../src/domain/order-input.js';
import { setStock } from '../../src/orders/stock.js';
import { startOrder } from '../../src/saga-client/start-order.js';
import { PROJECT_ROOT } from '../../src/operations/stack/paths.js';
import { findFreePort } from '../../src/operations/stack/ports.js';
import { startTemporalServer, type RunningTemporalServer } from '../../src/operations/stack/temporal-server.js';
import { startStripeEmulator } from '@order-payments/stripe-emulator';
import { createStripeClient } from '../../src/money/stripe/client.js';
import { createOrderWorker } from '../../src/platform/temporal/order-worker.js';
import { becomeCurrent } from '../../src/operations/deploy/deployment-routing.js';
import { createTestDatabase } from '../support/database.js';
import { refuseCompletion } from '../support/refuse-completion.js';
import { developmentDataConverter, developmentEncryption } from '../support/payload-keys.js';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { authenticatorFor } from '../../src/codec-server/caller-auth.js';
import { buildCodecServer } from '../../src/codec-server/server.js';
import { encryptionCodecFor } from '../../src/platform/temporal/payload-encryption/data-converter.js';

/** The global setup finds Chromium or installs Debian's package (src/platform/tools/chromium.ts); playwright-core downloads no browser. */
const CHROMIUM = inject('chromiumPath');
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];
const ARTIFACTS = path.join(PROJECT_ROOT, 'test-results', 'web-ui');
/** `WEB_UI_SCREENSHOT_TO_DOCS=1` also refreshes the README's screenshot. */
const DOCS_SCREENSHOT = path.join(PROJECT_ROOT, 'docs', 'web-ui-compensated-run.png');
const NAMESPACE = 'default';

// This server is this file's own (the shared one runs without its UI), so fixed, readable IDs
// cannot collide and the screenshot reads like a real order.
const order: OrderInput = {
  orderId: 'A-1042',
  tenantId: 'default',
  customerId: 'cust-ada',
  amount: 2500,
  currency: 'usd',
  paymentMethod: 'pm_card_visa',
  sku: 'sku-widget',
  quantity: 1,
};

let server: RunningTemporalServer;
const CODEC_TOKEN = randomBytes(24).toString('hex');
const staticToken = authenticatorFor({ kind: 'static-token', token: CODEC_TOKEN });
/** Set by the last test: the codec server then refuses every request, as it would a revoked token. */
let codecRefuses = false;
let openedPage: Page | undefined;
/** Why Chromium did not launch: every test then fails with it, none is skipped. */
let launchFailure: Error | undefined;
let runId: string;
/** Undoes beforeAll, newest first, as far as it got. */
const cleanups: (() => Promise<void>)[] = [];

/** The page the tests drive; a browser that could not launch fails the test that asks, with why. */
function page(): Page {
  if (openedPage) return openedPage;
  throw launchFailure ?? new Error('the browser was not opened: see the error of beforeAll');
}

beforeAll(async () => {
  // First, and on its own: a browser that cannot launch fails each test with the reason.
  try {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    cleanups.push(() => browser.close());
    openedPage = await browser.newPage({ viewport: { width: 1800, height: 1000 } });
  } catch (error) {
    const why = (error instanceof Error ? error.message : String(error)).split('\n').find((line) => line.trim() !== '') ?? 'unknown error';
    launchFailure = new Error(`Chromium at ${CHROMIUM} could not launch: ${why.trim()} (set CHROMIUM_PATH to a working Chrome or Chromium)`);
  }
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed by an earlier file in this process.
  }
  await rm(ARTIFACTS, { recursive: true, force: true });
  await mkdir(ARTIFACTS, { recursive: true });
  // The codec server the UI decodes with, as the stack runs it: the dev UI passes no header, so
  // the token rides in the endpoint's path.
  const uiPort = await findFreePort();
  const codecServer = await buildCodecServer({
    codec: encryptionCodecFor(developmentEncryption()),
    authenticate: (token) => (codecRefuses ? Promise.resolve(null) : staticToken(token)),
    corsOrigins: [`http://127.0.0.1:${uiPort}`],
    bodyLimitBytes: 4 * 1024 * 1024,
    logger: pino({ level: 'silent' }),
    tokenInPath: true,
  });
  const codecUrl = await codecServer.listen({ port: 0, host: '127.0.0.1' });
  cleanups.push(() => codecServer.close());
  server = await startTemporalServer({
    cli: inject('temporalCli'),
    port: await findFreePort(),
    uiPort,
    uiCodecEndpoint: `${codecUrl}/ui/${CODEC_TOKEN}`,
    databaseFile: null,
    namespace: NAMESPACE,
    logFile: path.join(ARTIFACTS, 'temporal-dev-server.log'),
  });
  cleanups.push(() => server.stop());
  const db = await createTestDatabase();
  cleanups.push(() => db.drop());
  const emulator = await startStripeEmulator({ port: 0 });
  cleanups.push(() => emulator.close());
  const stripe = createStripeClient({ secretKey: 'sk_test_web_ui_suite', apiBase: emulator.url });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  cleanups.push(() => nativeConnection.close());
  const taskQueue = 'order-payments';
  const deployment = { deploymentName: 'order-payments', buildId: inject('workflowBuildId') };
  const worker = await createOrderWorker({
    connection: nativeConnection,
    namespace: NAMESPACE,
    taskQueue,
    deps: { db: db.pool, stripe },
    dataConverter: developmentDataConverter(),
    deployment,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    shutdownGraceTimeMs: 5_000,
  });
  const running = worker.run();
  cleanups.push(async () => {
    worker.shutdown();
    await running;
  });

  // The order is held, reserved and captured, and then cannot be confirmed (this database refuses
  // to let any order complete): the saga refunds the capture with the ledger's reversal, finds the
  // hold captured so there is nothing to void, and releases the reservation.
  await setStock(db.pool, order.sku, 10);
  await refuseCompletion(db.pool);
  const connection = await Connection.connect({ address: server.address });
  cleanups.push(() => connection.close());
  const client = new Client({ connection, namespace: NAMESPACE, dataConverter: developmentDataConverter() });
  await becomeCurrent(client, deployment, 'web-ui test');
  const started = await startOrder(client, taskQueue, order);
  const result = await started.handle.result();
  expect(result.status).toBe('compensated');
  runId = started.runId;

});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const runPage = (tab: 'history' | 'timeline' | 'user-metadata' | 'search-attributes') =>
  runUrl(server.uiUrl ?? '', NAMESPACE, `order-payment-${order.orderId}`, runId).replace(/\/history$/, `/${tab}`);

const TIMEOUT_MS = 20_000;

async function screenshotOnMiss(text: string): Promise<void> {
  // What the page showed instead, for whoever reads the CI artifacts.
  await page().screenshot({ path: path.join(ARTIFACTS, `missing-${text.replace(/[^\w-]+/g, '_').slice(0, 60)}.png`) });
}

/** Waits for `text` to show on the page; the UI loads its data after the first paint. */
async function expectVisible(text: string): Promise<void> {
  const locator = page().getByText(text, { exact: false }).first();
  try {
    await locator.waitFor({ state: 'visible', timeout: TIMEOUT_MS });
  } catch (error) {
    await screenshotOnMiss(text);
    throw error;
  }
  expect(await locator.isVisible()).toBe(true);
}

/** The UI renders user metadata (Markdown) in sandboxed iframes: looks for `text` in any of them. */
async function expectRenderedMarkdown(text: string): Promise<void> {
  const deadline = Date.now() + TIMEOUT_MS;
  let shown: string[] = [];
  while (Date.now() < deadline) {
    shown = await Promise.all(page().frames().map((frame) => frame.locator('body').innerText().catch(() => '')));
    if (shown.some((body) => body.replace(/\s+/g, ' ').includes(text))) break;
    await page().waitForTimeout(250);
  }
  if (!shown.some((body) => body.replace(/\s+/g, ' ').includes(text))) await screenshotOnMiss(text);
  expect(shown.map((body) => body.replace(/\s+/g, ' ').trim()).filter(Boolean)).toContainEqual(expect.stringContaining(text));
}

describe("the Temporal Web UI tells a compensated run's story", () => {
  it('labels each step by its downstream, and the compensations as such, on the timeline', async () => {
    await page().goto(runPage('timeline'), { waitUntil: 'networkidle' });
    // The Postgres steps are local activities: the timeline marks them by type; their summaries
    // and keys are in the event history (the next test).
    await expectVisible('recordOrderAndReserveStock');
    await expectVisible(`Stripe: hold order ${order.orderId}'s payment`);
    await expectVisible(`Stripe + ledger: capture order ${order.orderId}'s hold`);
    await expectVisible('Compensation · Stripe + ledger: refund what was captured');
    await expectVisible('Compensation · Stripe: void the hold (free)');
    await expectVisible('releaseStock');
    await page().screenshot({ path: path.join(ARTIFACTS, 'compensated-run-timeline.png') });
    if (process.env.WEB_UI_SCREENSHOT_TO_DOCS === '1') {
      await mkdir(path.dirname(DOCS_SCREENSHOT), { recursive: true });
      await page().screenshot({ path: DOCS_SCREENSHOT });
    }
  });

  it('names the idempotency key of each side effect in the event history', async () => {
    await page().goto(runPage('history'), { waitUntil: 'networkidle' });
    for (const activityId of ['reserve-stock', 'authorize-payment', 'capture-payment', 'refund-capture', 'void-authorization', 'release-stock']) {
      await expectVisible(`key ${runId}/${activityId}`);
    }
    await page().screenshot({ path: path.join(ARTIFACTS, 'compensated-run-history.png') });
  });

  it('shows the order as the summary (never the customer, the card or the amount), and the saga step as current details', async () => {
    await page().goto(runPage('user-metadata'), { waitUntil: 'networkidle' });
    await expectRenderedMarkdown(`Order ${order.orderId}`);
    await expectRenderedMarkdown('Every side effect is keyed <original run ID>/<activity ID>');
    await expectRenderedMarkdown(`done · order ${order.orderId} · status compensated`);
    await page().screenshot({ path: path.join(ARTIFACTS, 'compensated-run-metadata.png') });
  });

  it('shows the OrderId and OrderStatus search attributes on the run', async () => {
    await page().goto(runPage('search-attributes'), { waitUntil: 'networkidle' });
    await expectVisible(`"OrderId": "${order.orderId}"`);
    await expectVisible('"OrderStatus": "compensated"');
    await page().screenshot({ path: path.join(ARTIFACTS, 'compensated-run-search-attributes.png') });
  });

  it('finds the run in the list view by OrderId and OrderStatus', async () => {
    const query = `OrderId = "${order.orderId}" AND OrderStatus = "compensated"`;
    await page().goto(listUrl(server.uiUrl ?? '', NAMESPACE, query), { waitUntil: 'networkidle' });
    await expectVisible(`order-payment-${order.orderId}`);
    await page().screenshot({ path: path.join(ARTIFACTS, 'list-filtered-by-search-attributes.png') });

    await page().goto(listUrl(server.uiUrl ?? '', NAMESPACE, `OrderId = "${order.orderId}" AND OrderStatus = "completed"`), {
      waitUntil: 'networkidle',
    });
    await expectVisible('No Workflows');
  });

  it("decodes the run's input and its activities' results through the codec server, and shows only ciphertext once it refuses", async () => {
    await page().goto(runPage('history'), { waitUntil: 'networkidle' });
    await expectVisible(order.customerId);
    await expectVisible('"status":"compensated"');
    codecRefuses = true;
    await page().goto(runPage('history'), { waitUntil: 'networkidle' });
    // The UI says the codec server refused, and shows the input and the result as the ciphertext they are.
    await expectRenderedMarkdown('Codec Server could not connect');
    const shown = await Promise.all(page().frames().map((frame) => frame.locator('body').innerText().catch(() => '')));
    expect(shown.join('\n')).not.toContain(order.customerId);
    await page().screenshot({ path: path.join(ARTIFACTS, 'compensated-run-codec-refused.png') });
  });
});

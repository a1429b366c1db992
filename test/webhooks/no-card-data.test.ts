// No card data kept: a charge.succeeded carrying the customer's billing details and the card's
// details is recorded (verified, deduplicated, projected), and afterwards not one of those values is
// in any table of the database, nor in the API's log. And the webhook route accepts the secrets
// being rotated, each of them, and nothing else.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectEvent, projectStoredEvent, stripeEventSchema, type StoredEventFields } from '../../src/messaging/webhooks/stripe-event.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { deliver, deliverSigned, sign, startApi, STORED_EVENT_COLUMNS, stripeEvent, WEBHOOK_SECRET, type RunningApi } from '../support/webhooks.js';

const RETIRING_SECRET = 'whsec_the_secret_being_rotated_out';

let db: TestDatabase;
let api: RunningApi;
const logLines: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  });
  api = await startApi({
    // The API's own login: what it could write is all it did write.
    db: db.servicePool('api'),
    signal: () => Promise.resolve('no-workflow'),
    secrets: [WEBHOOK_SECRET, RETIRING_SECRET],
    logger: pino({ level: 'debug' }, sink),
  });
});
afterAll(async () => {
  await api.close();
  await db.drop();
});

/** What a customer and a card leave in a Charge: none of it may be stored. */
const SECRETS = {
  name: 'Ada Lovelace-Byron',
  email: 'ada.lovelace@example.org',
  line1: '12 Analytical Engine Row',
  postalCode: 'NW1 6XE',
  phone: '+44 20 7946 0321',
  last4: '4931',
  fingerprint: 'Xt5EWLLDS7FJjR1c',
  expYear: '2031',
  receiptEmail: 'receipts.ada@example.org',
  merchantNote: 'customer asked for gift wrap',
};

function chargeWithCardData() {
  return {
    id: 'ch_card_data_1',
    object: 'charge',
    amount: 2500,
    amount_captured: 2500,
    amount_refunded: 0,
    currency: 'usd',
    status: 'succeeded',
    paid: true,
    refunded: false,
    payment_intent: 'pi_card_data_1',
    payment_method: 'pm_card_data_1',
    metadata: { order_id: 'order-card-data-1', note: SECRETS.merchantNote },
    receipt_email: SECRETS.receiptEmail,
    billing_details: {
      name: SECRETS.name,
      email: SECRETS.email,
      phone: SECRETS.phone,
      address: { line1: SECRETS.line1, line2: null, city: 'London', postal_code: SECRETS.postalCode, state: null, country: 'GB' },
    },
    payment_method_details: {
      type: 'card',
      card: {
        brand: 'visa',
        last4: SECRETS.last4,
        exp_month: 11,
        exp_year: Number(SECRETS.expYear),
        fingerprint: SECRETS.fingerprint,
        funding: 'credit',
        country: 'GB',
        checks: { address_line1_check: 'pass', address_postal_code_check: 'pass', cvc_check: 'pass' },
      },
    },
  };
}

/** Every table of the database, each row as JSON text. */
async function everyStoredRow(): Promise<string[]> {
  const { rows: tables } = await db.pool.query<{ table: string }>(
    `select c.relname as table from pg_class c where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') order by 1`,
  );
  const stored: string[] = [];
  for (const { table } of tables) {
    const { rows } = await db.pool.query<{ row: string }>(`select to_jsonb(t)::text as row from "${table}" t`);
    stored.push(...rows.map((row) => `${table}: ${row.row}`));
  }
  return stored;
}

describe('no card data kept', () => {
  it('a charge.succeeded with billing and card details: recorded, and none of those details in any table or log line', async () => {
    const event = stripeEvent('charge.succeeded', chargeWithCardData());
    const delivered = await deliverSigned(api.webhookUrl, event);
    expect(delivered).toEqual({ status: 200, body: { received: true, duplicate: false, applied: false } });
    // The same event again is a duplicate: the inbox row is what was kept of it.
    expect((await deliverSigned(api.webhookUrl, event)).body).toMatchObject({ duplicate: true });

    const stored = await everyStoredRow();
    expect(stored.some((row) => row.startsWith('stripe_webhook_events: ') && row.includes(event.id as string))).toBe(true);
    for (const [what, value] of Object.entries(SECRETS)) {
      expect({ what, found: stored.filter((row) => row.includes(value)) }).toEqual({ what, found: [] });
      expect({ what, logged: logLines.filter((line) => line.includes(value)) }).toEqual({ what, logged: [] });
    }
    // What is kept: the IDs, the type, the status and the amounts.
    const { rows } = await db.pool.query(
      'select object_type, object_status, amount, amount_refunded, refunded, currency, payment_intent_id, order_id from stripe_webhook_events where event_id = $1',
      [event.id],
    );
    expect(rows).toEqual([
      { object_type: 'charge', object_status: 'succeeded', amount: 2500, amount_refunded: 0, refunded: false, currency: 'usd', payment_intent_id: 'pi_card_data_1', order_id: 'order-card-data-1' },
    ]);
  });

  it('what is kept of an event projects to the state the whole event does, for every kind the service orders', async () => {
    const events = [
      stripeEvent('payment_intent.amount_capturable_updated', { id: 'pi_kept_1', object: 'payment_intent', status: 'requires_capture', amount: 900, currency: 'eur', metadata: { order_id: 'order-kept-1' } }),
      stripeEvent('charge.refunded', { ...chargeWithCardData(), id: 'ch_kept_2', payment_intent: 'pi_kept_2', amount_refunded: 1000, refunded: false }),
      stripeEvent('refund.updated', { id: 're_kept_3', object: 'refund', status: 'succeeded', amount: 1000, currency: 'usd', payment_intent: 'pi_kept_2', metadata: { order_id: 'order-kept-2' } }),
    ];
    for (const event of events) expect((await deliverSigned(api.webhookUrl, event)).status).toBe(200);
    const { rows } = await db.pool.query<StoredEventFields>(`select ${STORED_EVENT_COLUMNS} from stripe_webhook_events e where e.event_id = any($1)`, [
      events.map((event) => event.id),
    ]);
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      const whole = events.find((event) => event.id === row.eventId);
      expect(projectStoredEvent(row)).toEqual(projectEvent(stripeEventSchema.parse(whole)));
    }
  });
});

describe('webhook secret rotation', () => {
  it('accepts a delivery signed with the current secret or the one being retired, and refuses any other', async () => {
    const current = JSON.stringify(stripeEvent('payment_intent.created', { id: 'pi_rotation_1', object: 'payment_intent', status: 'requires_payment_method' }));
    const retiring = JSON.stringify(stripeEvent('payment_intent.created', { id: 'pi_rotation_2', object: 'payment_intent', status: 'requires_payment_method' }));
    const stranger = JSON.stringify(stripeEvent('payment_intent.created', { id: 'pi_rotation_3', object: 'payment_intent', status: 'requires_payment_method' }));
    expect((await deliver(api.webhookUrl, current, sign(current))).status).toBe(200);
    expect((await deliver(api.webhookUrl, retiring, sign(retiring, { secret: RETIRING_SECRET }))).status).toBe(200);
    const refused = await deliver(api.webhookUrl, stranger, sign(stranger, { secret: 'whsec_nobody_configured_this' }));
    expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_signature' } });
    const { rows } = await db.pool.query<{ object_id: string }>('select object_id from stripe_webhook_events where object_id like $1 order by 1', ['pi_rotation_%']);
    expect(rows.map((row) => row.object_id)).toEqual(['pi_rotation_1', 'pi_rotation_2']);
  });
});

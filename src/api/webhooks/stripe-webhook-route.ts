// `POST /webhooks/stripe`: verifies Stripe's signature, records the event in the inbox, answers,
// then hands payment events to the order's workflow and dispute events to the dispute's.
import type { FastifyPluginAsync } from 'fastify';
import type { Pool } from 'pg';
import Stripe from 'stripe';
import { z } from 'zod';
import { recordHandoff, recordStripeEvent } from '../../messaging/webhooks/record-stripe-event.js';
import { stripeEventSchema } from '../../messaging/webhooks/stripe-event.js';
import { WorkflowHandoff, type SignalPaymentEvent } from '../../messaging/webhooks/workflow-handoff.js';
import { EARLY_FRAUD_WARNING_CREATED, isDisputeEvent } from '../../messaging/webhooks/dispute-handoff.js';
import { countWebhookEvent, countWebhookSignatureFailure } from '../../platform/telemetry/api-metrics.js';

export interface StripeWebhookOptions {
  db: Pool;
  signalPaymentEvent: SignalPaymentEvent;
  /** Hands a dispute's webhook to its dispute workflow (Signal-With-Start); absent, dispute webhooks are only recorded. */
  signalDispute?: SignalPaymentEvent;
  /** Starts an early fraud warning's workflow; absent, warnings are only recorded. */
  startFraudWarning?: SignalPaymentEvent;
  /**
   * The endpoint's signing secrets (`whsec_...`): the current one, and while a secret is rotated,
   * the one being retired. A delivery signed with any of them is verified.
   */
  secrets: string[];
  /** Oldest signature timestamp accepted, in seconds; older is refused as a possible replay. */
  toleranceSeconds: number;
  handoff: { attempts?: number; retryMs?: number };
}

/**
 * `POST /webhooks/stripe`, in the order the rules demand:
 *   1. verify the signature over the raw bytes, first: a missing, bad or expired one gets 400
 *      and nothing is written;
 *   2. record the event in the inbox with its effect, in one transaction; a duplicate finds its
 *      inbox row and is acknowledged without effect;
 *   3. answer 2xx as soon as that committed (an error before it is a 500: Stripe retries);
 *   4. then hand the event to the order's workflow, outside the request.
 */
/**
 * The SDK's verification (the signature over the raw bytes, the timestamp tolerance) against each
 * secret in turn; the first that verifies wins. Every secret failing throws the current secret's
 * error, which says what is wrong with the signature.
 */
function verifyWithAny(body: Buffer, signature: Parameters<typeof Stripe.webhooks.constructEvent>[1], secrets: readonly string[], toleranceSeconds: number): unknown {
  let first: unknown = new Error('no webhook signing secret is configured');
  for (const [index, secret] of secrets.entries()) {
    try {
      return Stripe.webhooks.constructEvent(body, signature, secret, toleranceSeconds);
    } catch (error) {
      if (index === 0) first = error;
    }
  }
  throw first;
}

export const stripeWebhookRoutes: FastifyPluginAsync<StripeWebhookOptions> = (app, options) => {
  // One hand-off per kind of workflow an event goes to, each recording its end on the event.
  const handoffTo = (signal: SignalPaymentEvent, component: string) =>
    new WorkflowHandoff({ signal, record: (eventId, error) => recordHandoff(options.db, eventId, error), logger: app.log.child({ component }), ...options.handoff });
  const handoff = handoffTo(options.signalPaymentEvent, 'stripe-webhook-handoff');
  const disputeHandoff = options.signalDispute ? handoffTo(options.signalDispute, 'stripe-dispute-handoff') : null;
  const warningHandoff = options.startFraudWarning ? handoffTo(options.startFraudWarning, 'stripe-fraud-warning-handoff') : null;
  app.addHook('onClose', async () => {
    await handoff.drain();
    await disputeHandoff?.drain();
    await warningHandoff?.drain();
  });

  const webhookRouteSchema = {
    summary: 'Stripe webhook endpoint (signed with STRIPE_WEBHOOK_SECRET)',
    description: 'Records each verified event once (an inbox keyed by the event ID) and hands payment events to the order’s workflow.',
    tags: ['webhooks'],
    response: {
      200: z.looseObject({ received: z.literal(true), duplicate: z.boolean(), applied: z.boolean().optional() }).meta({ description: 'Recorded, or a duplicate acknowledged' }),
      400: z.looseObject({ error: z.string(), message: z.string() }).meta({ description: 'Stripe-Signature not verified, or not an event this service understands' }),
    },
  };

  // The signature covers the exact bytes Stripe sent: nothing in this plugin parses them first.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => {
    done(null, body);
  });

  app.post('/webhooks/stripe', { schema: webhookRouteSchema }, async (request, reply) => {
    const signature = request.headers['stripe-signature'];
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    let verified: unknown;
    try {
      verified = verifyWithAny(body, signature ?? '', options.secrets, options.toleranceSeconds);
    } catch (error) {
      const reason = error instanceof Error ? error.message.split('\n', 1)[0] : 'signature verification failed';
      request.log.warn({ reason }, 'webhook refused: signature not verified');
      countWebhookSignatureFailure();
      return reply.code(400).send({ error: 'invalid_signature', message: `Stripe-Signature not verified: ${reason}` });
    }
    const parsed = stripeEventSchema.safeParse(verified);
    if (!parsed.success) {
      // Signed by Stripe but not an event this service understands: say what is wrong.
      return reply.code(400).send({ error: 'invalid_event', message: z.prettifyError(parsed.error) });
    }
    const event = parsed.data;
    const recorded = await recordStripeEvent(options.db, event);
    countWebhookEvent(recorded.duplicate);
    request.log.info(
      { eventId: event.id, type: event.type, duplicate: recorded.duplicate, applied: !recorded.duplicate && recorded.applied },
      recorded.duplicate ? 'webhook duplicate acknowledged' : 'webhook recorded',
    );
    await reply.code(200).send(recorded.duplicate ? { received: true, duplicate: true } : { received: true, duplicate: false, applied: recorded.applied });
    if (!recorded.duplicate && recorded.handoff) handoff.start(recorded.handoff.orderId, recorded.handoff.event);
    if (recorded.duplicate) return reply;
    // A warning's and a dispute's events go to their own workflows, which read the object from
    // Stripe: the event only names it and wakes them.
    const notice = { eventId: event.id, type: event.type, objectId: event.data.object.id, paymentIntentId: null, status: event.data.object.status ?? '', created: event.created };
    if (warningHandoff && event.type === EARLY_FRAUD_WARNING_CREATED) warningHandoff.start(notice.objectId, notice);
    if (disputeHandoff && isDisputeEvent(event.type)) disputeHandoff.start(notice.objectId, notice);
    return reply;
  });
  return Promise.resolve();
};

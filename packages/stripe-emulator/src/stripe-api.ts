// The list of Stripe endpoints the emulator serves, which the server registers as routes.
import { retrieveCharge } from './charges.js';
import { closeDispute, listDisputes, retrieveDispute, updateDispute } from './disputes.js';
import { listEarlyFraudWarnings, retrieveEarlyFraudWarning } from './early-fraud-warnings.js';
import type { Endpoint } from './endpoint.js';
import { listEvents, retrieveEvent } from './event-endpoints.js';
import {
  cancelPaymentIntent,
  capturePaymentIntent,
  confirmPaymentIntent,
  createPaymentIntent,
  listPaymentIntents,
  retrievePaymentIntent,
  searchPaymentIntents,
} from './payment-intents.js';
import { createRefund, listRefunds, retrieveRefund } from './refunds.js';
import { createWebhookEndpoint, deleteWebhookEndpoint, listWebhookEndpoints } from './webhooks-api.js';

/** Every Stripe endpoint the emulator answers; anything else is Stripe's 404. */
export const STRIPE_ENDPOINTS: readonly Endpoint[] = [
  createPaymentIntent,
  listPaymentIntents,
  searchPaymentIntents,
  retrievePaymentIntent,
  confirmPaymentIntent,
  capturePaymentIntent,
  cancelPaymentIntent,
  retrieveCharge,
  createRefund,
  listRefunds,
  retrieveRefund,
  listDisputes,
  retrieveDispute,
  updateDispute,
  closeDispute,
  listEarlyFraudWarnings,
  retrieveEarlyFraudWarning,
  listEvents,
  retrieveEvent,
  createWebhookEndpoint,
  listWebhookEndpoints,
  deleteWebhookEndpoint,
];

// The PaymentIntents API: create, confirm, retrieve, list, search, cancel and capture, with the
// state changes and events each one makes, as Stripe does them.
import type Stripe from 'stripe';
import { afterCapture } from './capture-followups.js';
import { createCharge } from './charges.js';
import { checkChargeAmount, formatAmount, parseCurrency } from './currencies.js';
import type { Endpoint, Execution, RequestContext } from './endpoint.js';
import { ApiError, cardError, invalidRequest, resourceMissing } from './errors.js';
import { chargeOf, placeHold, releaseHold } from './holds.js';
import { newClientSecret, newId } from './ids.js';
import { paginate } from './pagination.js';
import {
  readBoolean,
  readEnum,
  readHash,
  readInteger,
  readMetadata,
  readString,
  readStringList,
  rejectUnknownParams,
  requireString,
  type FormParams,
} from './params.js';
import { findTestCard, paymentMethodObject, type TestCard } from './payment-methods.js';
import { matchesQuery, parseSearchQuery } from './search-query.js';
import { newestFirst, type AccountState } from './store.js';

/** Parameters Stripe accepts on create that the emulator deliberately does not implement. */
const CREATE_NOT_EMULATED = [
  'allowed_payment_method_types',
  'amount_details',
  'application_fee_amount',
  'confirmation_method',
  'confirmation_token',
  'customer_account',
  'error_on_requires_action',
  'excluded_payment_method_types',
  'hooks',
  'mandate',
  'mandate_data',
  'off_session',
  'on_behalf_of',
  'payment_details',
  'payment_method_configuration',
  'payment_method_data',
  'payment_method_options',
  'radar_options',
  'setup_future_usage',
  'shipping',
  'statement_descriptor',
  'transfer_data',
  'transfer_group',
  'use_stripe_sdk',
] as const;

const CANCELABLE: readonly Stripe.PaymentIntent.Status[] = [
  'requires_payment_method',
  'requires_capture',
  'requires_confirmation',
  'requires_action',
  'processing',
];

const CONFIRMABLE: readonly Stripe.PaymentIntent.Status[] = ['requires_payment_method', 'requires_confirmation'];

const EXPANDABLE = ['latest_charge'] as const;

/**
 * Stripe's answer when a confirmation could redirect and no `return_url` says where to come back.
 * Since API version 2023-08-16 `automatic_payment_methods` is enabled unless disabled, so a
 * server-side confirm must pass `automatic_payment_methods[allow_redirects]=never` or a return_url.
 */
function redirectNeedsReturnUrl(): ApiError {
  return invalidRequest(
    'This PaymentIntent is configured to accept payment methods enabled in your Dashboard. Because some of these ' +
      'payment methods might redirect your customer off of your page, you must provide a `return_url`. If you ' +
      "don't want to accept redirect-based payment methods, set `automatic_payment_methods[enabled]` to `true` and " +
      '`automatic_payment_methods[allow_redirects]` to `never` when creating Setup Intents and Payment Intents.',
  );
}

function paymentMethodTypesRemoved(): ApiError {
  return invalidRequest(
    'The `payment_method_types` parameter is no longer supported on API version 2026-10-28.endive. ' +
      'Use `automatic_payment_methods`, `allowed_payment_method_types` or `excluded_payment_method_types` instead.',
    { param: 'payment_method_types', code: 'payment_method_types_no_longer_supported' },
  );
}

function readExpand(params: FormParams, prefix = ''): string[] {
  const requested = readStringList(params, 'expand');
  for (const path of requested) {
    const field = path.startsWith(prefix) ? path.slice(prefix.length) : path;
    if (!EXPANDABLE.some((allowed) => allowed === field)) {
      throw invalidRequest(`This property cannot be expanded (${path}).`, { param: 'expand' });
    }
  }
  return requested.map((path) => path.slice(prefix.length));
}

/** The PaymentIntent as the API returns it, with `latest_charge` expanded when asked. */
function render(account: AccountState, paymentIntent: Stripe.PaymentIntent, expand: readonly string[]): Stripe.PaymentIntent {
  const copy = structuredClone(paymentIntent);
  if (expand.includes('latest_charge') && typeof copy.latest_charge === 'string') {
    copy.latest_charge = structuredClone(account.charges.get(copy.latest_charge) ?? null);
  }
  return copy;
}

function findPaymentIntent(account: AccountState, id: string, param: string, status: number): Stripe.PaymentIntent {
  const paymentIntent = account.paymentIntents.get(id);
  if (!paymentIntent) throw resourceMissing('payment_intent', id, param, status);
  return paymentIntent;
}

function readPaymentMethod(params: FormParams): TestCard | undefined {
  const id = readString(params, 'payment_method');
  if (id === undefined || id === '') return undefined;
  const card = findTestCard(id);
  if (!card) throw resourceMissing('PaymentMethod', id, 'payment_method');
  return card;
}

function readReturnUrl(params: FormParams): string | undefined {
  const url = readString(params, 'return_url');
  if (url === undefined) return undefined;
  if (!URL.canParse(url)) {
    throw invalidRequest('Not a valid URL', { param: 'return_url', code: 'url_invalid' });
  }
  return url;
}

function readAutomaticPaymentMethods(params: FormParams): Stripe.PaymentIntent.AutomaticPaymentMethods | null {
  const hash = readHash(params, 'automatic_payment_methods');
  // Enabled by default since API version 2023-08-16, redirects allowed.
  if (hash === undefined) return { allow_redirects: 'always', enabled: true };
  rejectUnknownParams(
    Object.fromEntries(Object.entries(hash).map(([key, value]) => [`automatic_payment_methods[${key}]`, value])),
    ['automatic_payment_methods[enabled]', 'automatic_payment_methods[allow_redirects]'],
  );
  const enabled = readBoolean(hash, 'enabled', 'automatic_payment_methods[enabled]');
  if (enabled === undefined) {
    throw invalidRequest('Missing required param: automatic_payment_methods[enabled].', {
      param: 'automatic_payment_methods[enabled]',
      code: 'parameter_missing',
    });
  }
  const allowRedirects = readString(hash, 'allow_redirects', 'automatic_payment_methods[allow_redirects]');
  if (allowRedirects !== undefined && allowRedirects !== 'always' && allowRedirects !== 'never') {
    throw invalidRequest('Invalid automatic_payment_methods[allow_redirects]: must be one of always or never', {
      param: 'automatic_payment_methods[allow_redirects]',
    });
  }
  if (!enabled) return null;
  return { allow_redirects: allowRedirects ?? 'always', enabled: true };
}

function mayRedirect(paymentIntent: Pick<Stripe.PaymentIntent, 'automatic_payment_methods'>): boolean {
  const methods = paymentIntent.automatic_payment_methods;
  return methods !== null && methods.enabled && methods.allow_redirects !== 'never';
}

function missingPaymentMethod(): ApiError {
  return invalidRequest(
    "You cannot confirm this PaymentIntent because it's missing a payment method. You can either update the " +
      'PaymentIntent with a payment method and then confirm it again, or confirm it again directly with a payment ' +
      'method or ConfirmationToken.',
    { code: 'payment_intent_unexpected_state' },
  );
}

/**
 * Attempts the charge. A decline leaves the PaymentIntent in `requires_payment_method` with
 * `last_payment_error` (state that stays, as on Stripe) and then throws the 402.
 */
function confirm(ctx: RequestContext, paymentIntent: Stripe.PaymentIntent, card: TestCard): void {
  const request = { requestId: ctx.requestId, idempotencyKey: ctx.idempotencyKey };
  const now = ctx.clock.nowSeconds();
  if (card.requiresAuthentication) {
    // No charge until the customer authenticates, which a server-side confirmation cannot do.
    paymentIntent.status = 'requires_action';
    paymentIntent.payment_method = card.id;
    paymentIntent.next_action = { type: 'use_stripe_sdk', use_stripe_sdk: { type: 'three_d_secure_redirect' } };
    ctx.account.events.record('payment_intent.requires_action', paymentIntent, now, request);
    return;
  }
  const charge = createCharge(ctx, paymentIntent, card);
  paymentIntent.latest_charge = charge.id;
  if (card.settlesAsync) {
    charge.status = 'pending';
    charge.paid = false;
    paymentIntent.status = 'processing';
    paymentIntent.payment_method = card.id;
    paymentIntent.processing = { type: 'card' };
    ctx.account.events.record('charge.pending', charge, now, request);
    ctx.account.events.record('payment_intent.processing', paymentIntent, now, request);
    ctx.settlements.schedulePaymentIntent(ctx.account, paymentIntent.id);
    return;
  }
  if (card.decline) {
    const paymentMethod = paymentMethodObject(card, now);
    paymentIntent.status = 'requires_payment_method';
    paymentIntent.payment_method = null;
    paymentIntent.last_payment_error = {
      charge: charge.id,
      code: 'card_declined',
      decline_code: card.decline.declineCode,
      doc_url: 'https://stripe.com/docs/error-codes/card-declined',
      message: card.decline.message,
      payment_method: paymentMethod,
      type: 'card_error',
    };
    ctx.account.events.record('charge.failed', charge, now, request);
    ctx.account.events.record('payment_intent.payment_failed', paymentIntent, now, request);
    throw cardError({
      message: card.decline.message,
      declineCode: card.decline.declineCode,
      charge: charge.id,
      paymentIntent: structuredClone(paymentIntent),
      paymentMethod,
    });
  }
  paymentIntent.payment_method = card.id;
  paymentIntent.last_payment_error = null;
  if (paymentIntent.capture_method === 'manual') {
    // A hold: authorized for the whole amount, captured later (or voided, or left to lapse).
    placeHold(ctx.account, paymentIntent, charge);
    ctx.counters.payment('authorizations');
    ctx.account.events.record('charge.succeeded', charge, now, request);
    ctx.account.events.record('payment_intent.amount_capturable_updated', paymentIntent, now, request);
    return;
  }
  paymentIntent.status = 'succeeded';
  paymentIntent.amount_received = paymentIntent.amount;
  ctx.account.events.record('charge.succeeded', charge, now, request);
  ctx.account.events.record('payment_intent.succeeded', paymentIntent, now, request);
  afterCapture(ctx.account, charge, now);
}

export const createPaymentIntent: Endpoint = {
  method: 'POST',
  path: '/v1/payment_intents',
  prepare(ctx) {
    const { params } = ctx;
    if (params.payment_method_types !== undefined) throw paymentMethodTypesRemoved();
    rejectUnknownParams(
      params,
      [
        'amount',
        'currency',
        'payment_method',
        'confirm',
        'customer',
        'description',
        'metadata',
        'automatic_payment_methods',
        'capture_method',
        'return_url',
        'expand',
        'receipt_email',
        'statement_descriptor_suffix',
      ],
      CREATE_NOT_EMULATED,
    );
    if (params.amount === undefined) {
      throw invalidRequest('Missing required param: amount.', { param: 'amount', code: 'parameter_missing' });
    }
    const amount = readInteger(params, 'amount', { min: 1 }) ?? 0;
    const currency = parseCurrency(requireString(params, 'currency'));
    checkChargeAmount(amount, currency);
    const captureMethod = readEnum(params, 'capture_method', ['automatic', 'automatic_async', 'manual'] as const);
    const card = readPaymentMethod(params);
    const shouldConfirm = readBoolean(params, 'confirm') ?? false;
    const automaticPaymentMethods = readAutomaticPaymentMethods(params);
    const returnUrl = readReturnUrl(params);
    const expand = readExpand(params);
    const metadata = readMetadata(params);
    const customer = readString(params, 'customer') ?? null;
    const description = readString(params, 'description') ?? null;
    const receiptEmail = readString(params, 'receipt_email') ?? null;
    const statementDescriptorSuffix = readString(params, 'statement_descriptor_suffix') ?? null;
    if (shouldConfirm && !card) throw missingPaymentMethod();
    if (shouldConfirm && returnUrl === undefined && mayRedirect({ automatic_payment_methods: automaticPaymentMethods })) {
      throw redirectNeedsReturnUrl();
    }
    return () => {
      const id = newId('pi');
      const paymentIntent: Stripe.PaymentIntent = {
        id,
        object: 'payment_intent',
        allowed_payment_method_types: null,
        amount,
        amount_capturable: 0,
        amount_received: 0,
        application: null,
        application_fee_amount: null,
        automatic_payment_methods: automaticPaymentMethods,
        canceled_at: null,
        cancellation_reason: null,
        capture_method: captureMethod ?? 'automatic',
        client_secret: newClientSecret(id),
        confirmation_method: 'automatic',
        created: ctx.clock.nowSeconds(),
        currency,
        customer,
        customer_account: null,
        description,
        excluded_payment_method_types: null,
        last_payment_error: null,
        latest_charge: null,
        livemode: false,
        managed_payments: null,
        metadata,
        next_action: null,
        on_behalf_of: null,
        payment_method: card?.id ?? null,
        payment_method_configuration_details: null,
        payment_method_options: {
          card: { installments: null, mandate_options: null, network: null, request_three_d_secure: 'automatic' },
        },
        payment_method_types: ['card'],
        payment_record: null,
        processing: null,
        receipt_email: receiptEmail,
        review: null,
        setup_future_usage: null,
        shipping: null,
        source: null,
        statement_descriptor: null,
        statement_descriptor_suffix: statementDescriptorSuffix,
        status: card ? 'requires_confirmation' : 'requires_payment_method',
        transfer_data: null,
        transfer_group: null,
      };
      ctx.account.paymentIntents.set(id, paymentIntent);
      ctx.account.events.record('payment_intent.created', paymentIntent, paymentIntent.created, {
        requestId: ctx.requestId,
        idempotencyKey: ctx.idempotencyKey,
      });
      if (shouldConfirm && card) confirm(ctx, paymentIntent, card);
      return render(ctx.account, paymentIntent, expand);
    };
  },
};

export const confirmPaymentIntent: Endpoint = {
  method: 'POST',
  path: '/v1/payment_intents/:id/confirm',
  prepare(ctx) {
    const { params } = ctx;
    if (params.payment_method_types !== undefined) throw paymentMethodTypesRemoved();
    rejectUnknownParams(params, ['payment_method', 'return_url', 'expand'], CREATE_NOT_EMULATED);
    const id = ctx.pathParams.id ?? '';
    const existing = findPaymentIntent(ctx.account, id, 'intent', 404);
    const expand = readExpand(params);
    const returnUrl = readReturnUrl(params);
    const attached = typeof existing.payment_method === 'string' ? findTestCard(existing.payment_method) : undefined;
    const card = readPaymentMethod(params) ?? attached;
    if (!card) throw missingPaymentMethod();
    if (returnUrl === undefined && mayRedirect(existing)) throw redirectNeedsReturnUrl();
    return () => {
      const paymentIntent = findPaymentIntent(ctx.account, id, 'intent', 404);
      if (!CONFIRMABLE.includes(paymentIntent.status)) {
        throw invalidRequest(
          `You cannot confirm this PaymentIntent because it has a status of ${paymentIntent.status}.`,
          { code: 'payment_intent_unexpected_state' },
        );
      }
      confirm(ctx, paymentIntent, card);
      return render(ctx.account, paymentIntent, expand);
    };
  },
};

export const retrievePaymentIntent: Endpoint = {
  method: 'GET',
  path: '/v1/payment_intents/:id',
  prepare(ctx) {
    rejectUnknownParams(ctx.params, ['expand', 'client_secret']);
    const paymentIntent = findPaymentIntent(ctx.account, ctx.pathParams.id ?? '', 'intent', 404);
    const expand = readExpand(ctx.params);
    return () => render(ctx.account, paymentIntent, expand);
  },
};

export const listPaymentIntents: Endpoint = {
  method: 'GET',
  path: '/v1/payment_intents',
  prepare(ctx) {
    rejectUnknownParams(ctx.params, ['limit', 'starting_after', 'ending_before', 'customer', 'expand'], ['created']);
    const customer = readString(ctx.params, 'customer');
    const expand = readExpand(ctx.params, 'data.');
    return () => {
      const all = newestFirst(ctx.account.paymentIntents).filter(
        (paymentIntent) => customer === undefined || paymentIntent.customer === customer,
      );
      const page = paginate(all, ctx.params, '/v1/payment_intents', 'payment_intent');
      return { ...page, data: page.data.map((item) => render(ctx.account, item, expand)) };
    };
  },
};

function readPageOffset(params: FormParams): number {
  const page = readString(params, 'page');
  if (page === undefined || page === '') return 0;
  const offset = Number(Buffer.from(page, 'base64url').toString('utf8'));
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw invalidRequest(`Invalid page: ${page}`, { param: 'page' });
  }
  return offset;
}

/**
 * Stripe's search is eventually consistent (results can lag writes by about a minute); the
 * emulator's is immediate, which is the kinder case for a reconciler and the one tests can pin.
 */
export const searchPaymentIntents: Endpoint = {
  method: 'GET',
  path: '/v1/payment_intents/search',
  prepare(ctx) {
    rejectUnknownParams(ctx.params, ['query', 'limit', 'page', 'expand']);
    const query = parseSearchQuery(requireString(ctx.params, 'query'), ['amount', 'currency', 'customer', 'status']);
    const limit = readInteger(ctx.params, 'limit', { min: 1, max: 100 }) ?? 10;
    const offset = readPageOffset(ctx.params);
    const expand = readExpand(ctx.params, 'data.');
    return () => {
      const matches = newestFirst(ctx.account.paymentIntents).filter((paymentIntent) =>
        matchesQuery(query, paymentIntent),
      );
      const data = matches.slice(offset, offset + limit);
      const hasMore = matches.length > offset + limit;
      return {
        object: 'search_result',
        data: data.map((item) => render(ctx.account, item, expand)),
        has_more: hasMore,
        next_page: hasMore ? Buffer.from(String(offset + limit), 'utf8').toString('base64url') : null,
        url: '/v1/payment_intents/search',
      };
    };
  },
};

export const cancelPaymentIntent: Endpoint = {
  method: 'POST',
  path: '/v1/payment_intents/:id/cancel',
  prepare(ctx): Execution {
    rejectUnknownParams(ctx.params, ['cancellation_reason', 'expand']);
    const id = ctx.pathParams.id ?? '';
    findPaymentIntent(ctx.account, id, 'intent', 404);
    const reason = readEnum(ctx.params, 'cancellation_reason', [
      'duplicate',
      'fraudulent',
      'requested_by_customer',
      'abandoned',
    ] as const);
    const expand = readExpand(ctx.params);
    return () => {
      const paymentIntent = findPaymentIntent(ctx.account, id, 'intent', 404);
      if (!CANCELABLE.includes(paymentIntent.status)) {
        throw unexpectedState('cancel', paymentIntent.status, CANCELABLE);
      }
      const now = ctx.clock.nowSeconds();
      if (paymentIntent.status === 'requires_capture') {
        // Voiding a hold releases what it holds; nothing was captured, so nothing is refunded.
        releaseHold(ctx.account, paymentIntent, { reason: reason ?? null, at: now });
      } else {
        paymentIntent.status = 'canceled';
        paymentIntent.canceled_at = now;
        paymentIntent.next_action = null;
        paymentIntent.processing = null;
        paymentIntent.cancellation_reason = reason ?? null;
      }
      ctx.counters.payment('cancels');
      ctx.account.events.record('payment_intent.canceled', paymentIntent, now, {
        requestId: ctx.requestId,
        idempotencyKey: ctx.idempotencyKey,
      });
      return render(ctx.account, paymentIntent, expand);
    };
  },
};

const CAPTURABLE: readonly Stripe.PaymentIntent.Status[] = ['requires_capture'];

/** Stripe's answer to an action a PaymentIntent's status does not allow. */
function unexpectedState(action: 'capture' | 'cancel', status: string, allowed: readonly string[]): ApiError {
  const verb = action === 'capture' ? 'captured' : 'canceled';
  return invalidRequest(
    action === 'capture'
      ? `This PaymentIntent could not be captured because it has a status of ${status}. Only a PaymentIntent with one of the following statuses may be ${verb}: ${allowed.join(', ')}.`
      : `You cannot cancel this PaymentIntent because it has a status of ${status}. Only a PaymentIntent with one of the following statuses may be ${verb}: ${allowed.join(', ')}.`,
    { code: 'payment_intent_unexpected_state' },
  );
}

/**
 * Captures a hold: all of `amount_capturable`, or `amount_to_capture` of it. Stripe captures a
 * PaymentIntent once: a partial capture releases the rest (unless `final_capture=false`, which
 * needs multicapture and is refused here), and a PaymentIntent that is not in `requires_capture`
 * (captured already, voided, lapsed) is refused with `payment_intent_unexpected_state`.
 */
export const capturePaymentIntent: Endpoint = {
  method: 'POST',
  path: '/v1/payment_intents/:id/capture',
  prepare(ctx): Execution {
    const { params } = ctx;
    rejectUnknownParams(params, ['amount_to_capture', 'final_capture', 'metadata', 'expand'], [
      'application_fee_amount',
      'hooks',
      'payment_details',
      'statement_descriptor',
      'statement_descriptor_suffix',
      'transfer_data',
    ]);
    const id = ctx.pathParams.id ?? '';
    findPaymentIntent(ctx.account, id, 'intent', 404);
    const amountToCapture = readInteger(params, 'amount_to_capture', { min: 1 });
    const finalCapture = readBoolean(params, 'final_capture') ?? true;
    if (!finalCapture) {
      throw invalidRequest('The emulator does not implement multicapture: final_capture must be true.', { param: 'final_capture' });
    }
    const metadata = params.metadata === undefined ? undefined : readMetadata(params);
    const expand = readExpand(params);
    return () => {
      const paymentIntent = findPaymentIntent(ctx.account, id, 'intent', 404);
      if (!CAPTURABLE.includes(paymentIntent.status)) throw unexpectedState('capture', paymentIntent.status, CAPTURABLE);
      const capturable = paymentIntent.amount_capturable;
      const amount = amountToCapture ?? capturable;
      if (amount > capturable) {
        throw invalidRequest(
          `The amount_to_capture (${formatAmount(amount, paymentIntent.currency)}) must be less than or equal to the amount_capturable (${formatAmount(capturable, paymentIntent.currency)}).`,
          { param: 'amount_to_capture', code: 'amount_too_large' },
        );
      }
      const charge = chargeOf(ctx.account, paymentIntent);
      if (!charge) throw new Error(`PaymentIntent ${paymentIntent.id} in requires_capture has no charge`);
      const now = ctx.clock.nowSeconds();
      charge.captured = true;
      charge.amount_captured = amount;
      // What is not captured is released: it shows as refunded on the charge, as on Stripe.
      charge.amount_refunded = charge.amount - amount;
      charge.refunded = false;
      charge.balance_transaction = newId('txn');
      paymentIntent.status = 'succeeded';
      paymentIntent.amount_received = amount;
      paymentIntent.amount_capturable = 0;
      if (metadata !== undefined) paymentIntent.metadata = { ...paymentIntent.metadata, ...metadata };
      ctx.account.heldPaymentIntents.delete(paymentIntent.id);
      ctx.counters.payment('captures');
      const request = { requestId: ctx.requestId, idempotencyKey: ctx.idempotencyKey };
      ctx.account.events.record('charge.captured', charge, now, request);
      ctx.account.events.record('payment_intent.succeeded', paymentIntent, now, request);
      afterCapture(ctx.account, charge, now);
      return render(ctx.account, paymentIntent, expand);
    };
  },
};

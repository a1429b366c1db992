// Stripe's webhook endpoints API: `POST`, `GET` and `DELETE /v1/webhook_endpoints`, scoped to
// the calling account.
import type { Endpoint } from './endpoint.js';
import { invalidRequest, resourceMissing } from './errors.js';
import { paginate } from './pagination.js';
import { readMetadata, readString, readStringList, rejectUnknownParams, requireString } from './params.js';
import { webhookEndpointObject } from './webhooks-endpoints.js';

/** `POST /v1/webhook_endpoints`: an endpoint for this account's events; the answer carries its secret, once. */
export const createWebhookEndpoint: Endpoint = {
  method: 'POST',
  path: '/v1/webhook_endpoints',
  prepare(ctx) {
    rejectUnknownParams(ctx.params, ['url', 'enabled_events', 'description', 'metadata', 'api_version'], ['connect', 'expand']);
    const url = requireString(ctx.params, 'url');
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      throw invalidRequest('Invalid URL: URL must be publicly accessible over http(s).', { param: 'url', code: 'url_invalid' });
    }
    const enabledEvents = readStringList(ctx.params, 'enabled_events');
    if (enabledEvents.length === 0) {
      throw invalidRequest('Missing required param: enabled_events.', { param: 'enabled_events', code: 'parameter_missing' });
    }
    const description = readString(ctx.params, 'description') ?? null;
    const metadata = readMetadata(ctx.params);
    return () => {
      const record = ctx.webhookEndpoints.add({ url, enabledEvents, description }, ctx.account.id, metadata);
      return webhookEndpointObject(record, true);
    };
  },
};

export const listWebhookEndpoints: Endpoint = {
  method: 'GET',
  path: '/v1/webhook_endpoints',
  prepare(ctx) {
    rejectUnknownParams(ctx.params, ['limit', 'starting_after', 'ending_before']);
    return () => {
      const endpoints = ctx.webhookEndpoints
        .list(ctx.account.id)
        .reverse()
        .map((record) => webhookEndpointObject(record, false));
      return paginate(endpoints, ctx.params, '/v1/webhook_endpoints', 'webhook_endpoint');
    };
  },
};

export const deleteWebhookEndpoint: Endpoint = {
  method: 'DELETE',
  path: '/v1/webhook_endpoints/:id',
  prepare(ctx) {
    rejectUnknownParams(ctx.params, []);
    const id = ctx.pathParams.id ?? '';
    if (ctx.webhookEndpoints.get(id)?.accountId !== ctx.account.id) throw resourceMissing('webhook_endpoint', id, 'id', 404);
    return () => {
      ctx.webhookEndpoints.remove(id);
      return { id, object: 'webhook_endpoint', deleted: true };
    };
  },
};

// `GET /v1/events` and `GET /v1/events/:id`: an account's recorded events, as Stripe lists them.
import type { Endpoint } from './endpoint.js';
import { resourceMissing } from './errors.js';
import { paginate } from './pagination.js';
import { readString, rejectUnknownParams } from './params.js';

export const listEvents: Endpoint = {
  method: 'GET',
  path: '/v1/events',
  prepare(ctx) {
    rejectUnknownParams(ctx.params, ['type', 'limit', 'starting_after', 'ending_before'], ['created', 'delivery_success', 'types']);
    const type = readString(ctx.params, 'type');
    return () => {
      const events = ctx.account.events.newestFirst().filter((event) => type === undefined || event.type === type);
      return paginate(events, ctx.params, '/v1/events', 'event');
    };
  },
};

export const retrieveEvent: Endpoint = {
  method: 'GET',
  path: '/v1/events/:id',
  prepare(ctx) {
    rejectUnknownParams(ctx.params, []);
    const id = ctx.pathParams.id ?? '';
    const event = ctx.account.events.find(id);
    if (!event) throw resourceMissing('event', id, 'id', 404);
    return () => event;
  },
};

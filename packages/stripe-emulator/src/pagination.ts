// Stripe's cursor pagination (`limit`, `starting_after`, `ending_before`) for the list endpoints.
import { invalidRequest } from './errors.js';
import { readInteger, readString, type FormParams } from './params.js';

export interface ListPage<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  url: string;
}

/**
 * Cursor pagination over a newest-first list, as Stripe's list endpoints do it:
 * `starting_after` pages toward older objects, `ending_before` toward newer ones.
 */
export function paginate<T extends { id: string }>(
  items: readonly T[],
  params: FormParams,
  url: string,
  objectName: string,
): ListPage<T> {
  const limit = readInteger(params, 'limit', { min: 1, max: 100 }) ?? 10;
  const startingAfter = readString(params, 'starting_after');
  const endingBefore = readString(params, 'ending_before');
  if (startingAfter !== undefined && endingBefore !== undefined) {
    throw invalidRequest('You may only specify one of these parameters: ending_before, starting_after.', {
      code: 'parameters_exclusive',
    });
  }
  if (startingAfter !== undefined) {
    const index = cursorIndex(items, startingAfter, 'starting_after', objectName);
    const rest = items.slice(index + 1);
    return { object: 'list', data: rest.slice(0, limit), has_more: rest.length > limit, url };
  }
  if (endingBefore !== undefined) {
    const index = cursorIndex(items, endingBefore, 'ending_before', objectName);
    const before = items.slice(0, index);
    const page = before.slice(Math.max(0, before.length - limit));
    return { object: 'list', data: page, has_more: before.length > limit, url };
  }
  return { object: 'list', data: items.slice(0, limit), has_more: items.length > limit, url };
}

function cursorIndex(items: readonly { id: string }[], id: string, param: string, objectName: string): number {
  const index = items.findIndex((item) => item.id === id);
  if (index === -1) {
    throw invalidRequest(`No such ${objectName}: '${id}'`, { param, code: 'resource_missing' });
  }
  return index;
}

// Stripe's search query language, the subset the emulator supports: parsing a query and matching
// objects against it.
import { invalidRequest } from './errors.js';

/** One `field:value` term of Stripe's search query language. */
interface Term {
  negated: boolean;
  /** `metadata` terms carry the metadata key; other fields are top-level attributes. */
  field: { kind: 'metadata'; key: string } | { kind: 'attribute'; name: string };
  value: string;
}

export interface SearchQuery {
  combinator: 'AND' | 'OR';
  terms: Term[];
}

export interface Searchable {
  metadata: Readonly<Record<string, string>> | null;
}

const TERM =
  /^\s*(-)?(?:metadata\[(?:'([^']*)'|"([^"]*)")\]|([a-z_]+))\s*:\s*(?:'([^']*)'|"([^"]*)"|(-?\d+))\s*/;
const COMBINATOR = /^(AND|OR)\s+/;

/**
 * Parses the subset of Stripe's search query language the saga needs: exact-match `:` terms on
 * metadata and top-level fields, optionally negated with `-`, joined by AND or by OR (Stripe
 * does not allow mixing them). Range (`>`, `<`) and substring (`~`) operators are not emulated.
 */
export function parseSearchQuery(query: string, allowedFields: readonly string[]): SearchQuery {
  let rest = query.trim();
  const terms: Term[] = [];
  let combinator: SearchQuery['combinator'] | undefined;
  while (rest !== '') {
    const match = TERM.exec(rest);
    if (!match) throw invalidQuery(query, `could not parse the query near '${rest}'`);
    const [whole, negation, singleKey, doubleKey, attribute, singleValue, doubleValue, numberValue] = match;
    const metadataKey = singleKey ?? doubleKey;
    if (attribute !== undefined && !allowedFields.includes(attribute)) {
      throw invalidQuery(query, `the field '${attribute}' is not searchable here (emulated: metadata, ${allowedFields.join(', ')})`);
    }
    terms.push({
      negated: negation === '-',
      field: metadataKey !== undefined ? { kind: 'metadata', key: metadataKey } : { kind: 'attribute', name: attribute ?? '' },
      value: singleValue ?? doubleValue ?? numberValue ?? '',
    });
    rest = rest.slice(whole.length);
    if (rest === '') break;
    const joiner = COMBINATOR.exec(rest);
    if (!joiner?.[1]) throw invalidQuery(query, `expected AND or OR near '${rest}'`);
    const next = joiner[1] === 'AND' ? 'AND' : 'OR';
    if (combinator !== undefined && combinator !== next) {
      throw invalidQuery(query, 'AND and OR cannot be combined in the same query');
    }
    combinator = next;
    rest = rest.slice(joiner[0].length);
  }
  if (terms.length === 0) throw invalidQuery(query, 'the query is empty');
  return { combinator: combinator ?? 'AND', terms };
}

export function matchesQuery(query: SearchQuery, object: Searchable): boolean {
  const results = query.terms.map((term) => matchesTerm(term, object));
  return query.combinator === 'AND' ? results.every(Boolean) : results.some(Boolean);
}

function matchesTerm(term: Term, object: Searchable): boolean {
  const actual: unknown =
    term.field.kind === 'metadata' ? object.metadata?.[term.field.key] : Reflect.get(object, term.field.name);
  const equal = actual !== undefined && actual !== null && stringify(actual) === term.value;
  return term.negated ? !equal : equal;
}

function stringify(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : JSON.stringify(value);
}

function invalidQuery(query: string, reason: string) {
  return invalidRequest(`Invalid search query '${query}': ${reason}.`, { param: 'query' });
}

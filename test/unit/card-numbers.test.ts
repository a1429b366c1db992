// The check the telemetry tests use to prove no card number reaches a span (test/support/card-numbers.ts).
import { describe, expect, it } from 'vitest';
import { cardNumbersIn } from '../support/card-numbers.js';

describe('cardNumbersIn', () => {
  it('finds test cards, grouped or not, inside JSON', () => {
    expect(cardNumbersIn('{"a":"4242424242424242"}')).toEqual(['4242424242424242']);
    expect(cardNumbersIn('{"a":"4000 0025 0000 3155","b":"5555-5555-5555-4444"}')).toEqual(['4000 0025 0000 3155', '5555-5555-5555-4444']);
  });

  it('ignores UUIDs whose groups run to 13 or more digits, hex IDs, and digit runs that fail the Luhn check', () => {
    // A run ID seen in CI: "24570-8212-7522-9" alone is 14 digits.
    expect(cardNumbersIn('{"run_id":"01a24570-8212-7522-9b02-9e6947807d32"}')).toEqual([]);
    expect(cardNumbersIn('{"span":"4242424242424242ab"}')).toEqual([]);
    expect(cardNumbersIn('{"n":"4242424242424243"}')).toEqual([]);
  });
});

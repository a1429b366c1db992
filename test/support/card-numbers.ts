// Test support: finds what could be a card number in span or metric text, for the tests that
// prove no customer data reaches telemetry.

/**
 * Digit runs shaped like a card number (13 to 19 digits, perhaps grouped) that pass the Luhn
 * check, as every card number does, test cards included. UUIDs (run IDs, keys) are taken out
 * first: a UUID v7's groups can be all digits and run together into 13 or more.
 */
export function cardNumbersIn(text: string): string[] {
  const withoutUuids = text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, 'uuid');
  const candidates = withoutUuids.match(/(?<![0-9a-f])\d(?:[ -]?\d){12,18}(?![0-9a-f])/gi) ?? [];
  return candidates.filter((candidate) => {
    const digits = candidate.replace(/\D/g, '');
    let sum = 0;
    for (let i = 0; i < digits.length; i++) {
      let digit = Number(digits[digits.length - 1 - i]);
      if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
      sum += digit;
    }
    return sum % 10 === 0;
  });
}

/**
 * Currencies Stripe accepts for card payments (lower-case ISO 4217), as Stripe lists them.
 * Amounts everywhere are in the currency's minor unit, as Stripe expects them.
 */
export const STRIPE_CURRENCIES = new Set([
  'usd', 'aed', 'afn', 'all', 'amd', 'ang', 'aoa', 'ars', 'aud', 'awg', 'azn', 'bam', 'bbd', 'bdt',
  'bgn', 'bhd', 'bif', 'bmd', 'bnd', 'bob', 'brl', 'bsd', 'bwp', 'byn', 'bzd', 'cad', 'cdf', 'chf',
  'clp', 'cny', 'cop', 'crc', 'cve', 'czk', 'djf', 'dkk', 'dop', 'dzd', 'egp', 'etb', 'eur', 'fjd',
  'fkp', 'gbp', 'gel', 'gip', 'gmd', 'gnf', 'gtq', 'gyd', 'hkd', 'hnl', 'htg', 'huf', 'idr', 'ils',
  'inr', 'isk', 'jmd', 'jod', 'jpy', 'kes', 'kgs', 'khr', 'kmf', 'krw', 'kwd', 'kyd', 'kzt', 'lak',
  'lbp', 'lkr', 'lrd', 'lsl', 'mad', 'mdl', 'mga', 'mkd', 'mmk', 'mnt', 'mop', 'mur', 'mvr', 'mwk',
  'mxn', 'myr', 'mzn', 'nad', 'ngn', 'nio', 'nok', 'npr', 'nzd', 'omr', 'pab', 'pen', 'pgk', 'php',
  'pkr', 'pln', 'pyg', 'qar', 'ron', 'rsd', 'rwf', 'sar', 'sbd', 'scr', 'sek', 'sgd', 'shp', 'sle',
  'sos', 'srd', 'szl', 'thb', 'tjs', 'tnd', 'top', 'try', 'ttd', 'twd', 'tzs', 'uah', 'ugx', 'uyu',
  'uzs', 'vnd', 'vuv', 'wst', 'xaf', 'xcd', 'xof', 'xpf', 'yer', 'zar', 'zmw',
]);

/**
 * Stripe's minimum charge per currency, in minor units, for the currencies its table lists
 * (https://docs.stripe.com/currencies#minimum-and-maximum-charge-amounts). Below it Stripe refuses
 * the PaymentIntent; refusing it at the door (400) starts nothing instead. A currency absent here
 * has a minimum of about 0.50 USD at the day's rate, which only Stripe can apply.
 */
export const STRIPE_MINIMUM_AMOUNTS: Readonly<Record<string, number>> = {
  usd: 50, aed: 200, aud: 50, bgn: 100, brl: 50, cad: 50, chf: 50, czk: 1500, dkk: 250, eur: 50,
  gbp: 30, hkd: 400, huf: 17500, inr: 50, jpy: 50, mxn: 1000, myr: 200, nok: 300, nzd: 50,
  pln: 200, ron: 200, sek: 300, sgd: 50, thb: 1000,
};

/** Why Stripe would refuse this amount as too small, or null when it would not. `currency` is lower-case. */
export function belowStripeMinimum(amount: number, currency: string): string | null {
  const minimum = STRIPE_MINIMUM_AMOUNTS[currency];
  if (minimum === undefined || amount >= minimum) return null;
  return `amount must be at least ${minimum} minor units for ${currency.toUpperCase()} (Stripe's minimum charge)`;
}

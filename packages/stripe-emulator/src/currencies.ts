// Currency rules as Stripe applies them: the supported currencies, minimum and maximum charge
// amounts, and amounts formatted the way Stripe's error messages write them.
import { invalidRequest } from './errors.js';

/** The presentment currencies Stripe lists for a US account (ISO 4217, lower case as the API uses them). */
const SUPPORTED = `usd aed afn all amd ang aoa ars aud awg azn bam bbd bdt bgn bif bmd bnd bob brl bsd bwp byn bzd
cad cdf chf clp cny cop crc cve czk djf dkk dop dzd egp etb eur fjd fkp gbp gel gip gmd gnf gtq gyd hkd hnl htg
huf idr ils inr isk jmd jpy kes kgs khr kmf krw kyd kzt lak lbp lkr lrd lsl mad mdl mga mkd mmk mnt mop mur mvr
mwk mxn myr mzn nad ngn nio nok npr nzd pab pen pgk php pkr pln pyg qar ron rsd rub rwf sar sbd scr sek sgd shp
sle sos srd std szl thb tjs top try ttd twd tzs uah ugx uyu uzs vnd vuv wst xaf xcd xof xpf yer zar zmw`
  .split(/\s+/)
  .filter((code) => code !== '');

const SUPPORTED_SET = new Set(SUPPORTED);

/** Stripe's minimum charge amounts (in minor units) for the currencies this project is likely to use. */
const MINIMUM_CHARGE: Readonly<Record<string, number>> = {
  usd: 50,
  eur: 50,
  gbp: 30,
  cad: 50,
  aud: 50,
  chf: 50,
  nzd: 50,
  sgd: 50,
  jpy: 50,
};

/** Stripe's ceiling for a single charge amount: eight digits, e.g. $999,999.99. */
export const MAX_AMOUNT = 99_999_999;

export function parseCurrency(raw: string): string {
  const code = raw.toLowerCase();
  if (!SUPPORTED_SET.has(code)) {
    throw invalidRequest(
      `Invalid currency: ${raw}. Stripe currently supports these currencies: ${SUPPORTED.join(', ')}`,
      { param: 'currency' },
    );
  }
  return code;
}

/** Formats minor units as Stripe's messages do, e.g. `$15.00` or `¥1,500`. */
export function formatAmount(amount: number, currency: string): string {
  const format = new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() });
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(amount / 10 ** digits);
}

export function checkChargeAmount(amount: number, currency: string): void {
  if (amount > MAX_AMOUNT) {
    throw invalidRequest(`Amount must be no more than ${formatAmount(MAX_AMOUNT, currency)}`, {
      param: 'amount',
      code: 'amount_too_large',
    });
  }
  const minimum = MINIMUM_CHARGE[currency];
  if (minimum !== undefined && amount < minimum) {
    throw invalidRequest(`Amount must be at least ${formatAmount(minimum, currency)} ${currency}`, {
      param: 'amount',
      code: 'amount_too_small',
    });
  }
}

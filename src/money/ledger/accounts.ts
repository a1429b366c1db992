/**
 * The two accounts a card payment moves money between. A charge debits the balance Stripe holds
 * for us and credits what we owe the customer until the order is fulfilled; a refund reverses
 * exactly that.
 */
export const LedgerAccount = {
  StripeBalance: 'assets:stripe_balance',
  CustomerPayments: 'liabilities:customer_payments',
} as const;

export type LedgerAccount = (typeof LedgerAccount)[keyof typeof LedgerAccount];

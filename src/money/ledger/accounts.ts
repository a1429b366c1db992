/**
 * The accounts money moves between. A charge debits the balance Stripe holds for us and credits
 * what we owe the customer until the order is fulfilled; a refund reverses exactly that. A
 * dispute withdraws from the balance into its own two accounts: the disputed amount (a loss until
 * the dispute is won and the amount reinstated) and the dispute fee (an expense, kept either way).
 */
export const LedgerAccount = {
  StripeBalance: 'assets:stripe_balance',
  CustomerPayments: 'liabilities:customer_payments',
  DisputedPayments: 'expenses:disputed_payments',
  DisputeFees: 'expenses:dispute_fees',
} as const;

export type LedgerAccount = (typeof LedgerAccount)[keyof typeof LedgerAccount];

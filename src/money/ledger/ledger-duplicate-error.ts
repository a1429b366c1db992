/**
 * The ledger already holds this Stripe object, or a charge for this order, under another key
 * (I1 at the ledger). The constraint is the second line of defence behind the idempotency key:
 * never retried, because a retry would meet the same row.
 */
export class LedgerDuplicateError extends Error {
  override readonly name = 'LedgerDuplicateError';
  constructor(
    readonly key: string,
    readonly guard: 'ledger_transactions_stripe_object_id_key' | 'ledger_one_charge_per_order',
    readonly existingKey: string,
  ) {
    super(`ledger posting '${key}' refused by ${guard}: the ledger already holds it under key '${existingKey}'; nothing was applied`);
  }
}

// The charge-first shape's ledger reversal of its refund, with its outbox event, once per key.
import { withTransaction } from '../../platform/db/transaction.js';
import { failpoint } from '../../platform/failpoint.js';
import { postLedgerTransaction } from '../../money/ledger/ledger.js';
import { announceOrderRefunded } from '../../messaging/outbox/order-events.js';
import { currentActivityKey } from '../activity-key.js';
import type { ActivityDeps } from '../deps.js';
import type { RecordRefundInput } from './types.js';

/**
 * Writes the ledger's reversal of a refund Stripe made, once, under this activity's own key.
 * A refund that did not happen (nothing was charged) has nothing to reverse.
 */
export function createRecordRefund(deps: ActivityDeps) {
  return async function recordRefund(input: RecordRefundInput): Promise<{ transactionId: number | null }> {
    const { refund } = input;
    if (refund.refundId === null || refund.currency === null) return { transactionId: null };
    const key = currentActivityKey(input.originalRunId);
    const posted = await withTransaction(deps.db, async (client) => {
        const transaction = await postLedgerTransaction(client, {
          orderId: input.orderId,
          kind: 'refund',
          amountMinor: refund.amount,
          currency: refund.currency ?? '',
          stripeObjectId: refund.refundId ?? '',
          idempotencyKey: key,
        });
        // The outbox rule: the reversal and its announcement commit together.
        await announceOrderRefunded(client, input.orderId, {
          amountMinor: refund.amount,
          currency: refund.currency ?? '',
          refundId: refund.refundId ?? '',
          paymentIntentId: refund.paymentIntentId,
        });
        return transaction;
      });
    failpoint('record-refund.after-ledger');
    return { transactionId: posted.transactionId };
  };
}

import { createChargePayment } from './charge-payment.js';
import type { ActivityDeps } from './deps.js';
import { createMerchantRefund } from './merchant-refund.js';
import { createOrderActivities } from './orders.js';
import { createRecordRefund } from './record-refund.js';
import { createRefundPayment } from './refund-payment.js';
import { createSettlePayment } from './settle-payment.js';
import { createStockActivities } from './stock.js';

export type { ActivityDeps } from './deps.js';

/**
 * Builds the saga's activities over their downstreams. The worker hands in the real Stripe
 * client and pg pool; tests hand in the same kinds of clients pointed at test servers.
 */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createOrderActivities(deps),
    chargePayment: createChargePayment(deps),
    settlePayment: createSettlePayment(deps),
    ...createStockActivities(deps),
    refundPayment: createRefundPayment(deps),
    recordRefund: createRecordRefund(deps),
    merchantRefund: createMerchantRefund(deps),
  };
}

export type OrderActivities = ReturnType<typeof createActivities>;

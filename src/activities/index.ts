// Builds every activity the worker registers, from the downstreams handed in (createActivities).
import { createRetentionActivities } from '../operations/retention/activities.js';
import { createAuthorizationActivities } from './authorization.js';
import { createCapturePayment } from './capture-payment.js';
import type { ActivityDeps } from './deps.js';
import { createDisputeActivities } from './disputes.js';
import { createFraudWarningActivities } from './fraud-warnings.js';
import { createMerchantRefund } from './merchant-refund.js';
import { createOrderActivities } from './orders.js';
import { createRefundCapture } from './refund-capture.js';
import { createStockActivities } from './stock.js';
import { createVoidAuthorization } from './void-authorization.js';
import { mappingEveryFailure } from './failures.js';

export type { ActivityDeps } from './deps.js';

/**
 * Builds the saga's activities over their downstreams. The worker hands in the real Stripe
 * client and pg pool; tests hand in the same kinds of clients pointed at test servers. Every
 * activity's final errors are mapped for Temporal here, once, so no activity can forget to.
 */
export function createActivities(deps: ActivityDeps) {
  return mappingEveryFailure({
    ...createOrderActivities(deps),
    ...createStockActivities(deps),
    ...createAuthorizationActivities(deps),
    ...createCapturePayment(deps),
    ...createRefundCapture(deps),
    ...createVoidAuthorization(deps),
    merchantRefund: createMerchantRefund(deps),
    // The dispute workflow's (src/workflows/order-dispute.ts).
    ...createDisputeActivities(deps),
    // The early fraud warning workflow's (src/workflows/order-fraud-warning.ts).
    ...createFraudWarningActivities(deps),
    // The scheduled jobs' (src/workflows/scheduled-jobs.ts): the reaper and the reconciliation.
    ...createRetentionActivities(deps),
  });
}

export type OrderActivities = ReturnType<typeof createActivities>;

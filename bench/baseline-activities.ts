import type { AllocateStockInput, ChargePaymentInput, ChargeResult, RecordOrderInput } from '../src/activities/types.js';

/**
 * The saga's forward activities with their signatures and no I/O: the baseline workflow's
 * activities cost only what Temporal and the worker charge for an activity.
 */
export function createBaselineActivities() {
  return {
    recordOrder(_input: RecordOrderInput): Promise<void> {
      return Promise.resolve();
    },
    chargePayment(input: ChargePaymentInput): Promise<ChargeResult> {
      return Promise.resolve({
        paymentIntentId: `pi_baseline_${input.order.orderId}`,
        amount: input.order.amount,
        currency: input.order.currency,
        status: 'succeeded',
      });
    },
    allocateStock(_input: AllocateStockInput): Promise<{ replayed: boolean }> {
      return Promise.resolve({ replayed: false });
    },
    confirmOrder(_input: { orderId: string }): Promise<void> {
      return Promise.resolve();
    },
  };
}

export type BaselineActivities = ReturnType<typeof createBaselineActivities>;

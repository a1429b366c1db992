// The benchmark baseline's activities: the saga's forward steps with their signatures and no I/O,
// so they cost only what Temporal and the worker charge per activity.
import type { AuthorizePaymentInput, Capture, CapturePaymentInput, HeldPayment, RecordAndReserveInput, RecordOrderInput, ReserveStockInput } from '../src/activities/types.js';

/**
 * The saga's forward activities with their signatures and no I/O: the baseline workflow's
 * activities cost only what Temporal and the worker charge for an activity.
 */
export function createBaselineActivities() {
  return {
    recordOrder(_input: RecordOrderInput): Promise<void> {
      return Promise.resolve();
    },
    reserveStock(_input: ReserveStockInput): Promise<{ replayed: boolean }> {
      return Promise.resolve({ replayed: false });
    },
    /** The new shape's first step, run as a local activity. */
    recordOrderAndReserveStock(_input: RecordAndReserveInput): Promise<{ replayed: boolean }> {
      return Promise.resolve({ replayed: false });
    },
    authorizePayment(input: AuthorizePaymentInput): Promise<HeldPayment> {
      return Promise.resolve({
        paymentIntentId: `pi_baseline_${input.order.orderId}`,
        amount: input.order.amount,
        currency: input.order.currency,
        status: 'requires_capture',
        captureBefore: Math.floor(Date.now() / 1000) + 7 * 24 * 60 * 60,
        captureWithinMs: 7 * 24 * 60 * 60 * 1000 - 60 * 60 * 1000,
      });
    },
    capturePayment(input: CapturePaymentInput): Promise<Capture> {
      return Promise.resolve({ paymentIntentId: input.hold.paymentIntentId, amountCaptured: input.hold.amount, currency: input.hold.currency, status: 'succeeded' });
    },
    confirmOrder(_input: { orderId: string }): Promise<void> {
      return Promise.resolve();
    },
  };
}

export type BaselineActivities = ReturnType<typeof createBaselineActivities>;

// The chaos run's seeded orders: mostly successes, with declines, orders racing for scarce SKUs,
// and cancels timed to void holds or refund captures, plus the stock to seed for them.
import { DEFAULT_TENANT_ID, type OrderInput } from '../../domain/order-input.js';

/** What an order is built to meet. Faults may still change where it ends. */
export type OrderIntent = 'success' | 'decline' | 'scarce' | 'cancel';

export interface ChaosOrder {
  order: OrderInput;
  intent: OrderIntent;
  /**
   * For `cancel`: when the run cancels the order. `authorizing`: while Stripe places the hold (the
   * hold that lands is voided); a number: that many ms after the hold is known (around the
   * capture, so the capture that lands is refunded).
   */
  cancelAt?: 'authorizing' | number;
}

export interface OrderMix {
  orders: ChaosOrder[];
  /** Stock to seed: plentiful SKUs, and scarce ones with fewer units than orders for them. */
  stock: { sku: string; available: number }[];
}

const PLENTIFUL_SKUS = 8;
/** Orders contending for each scarce SKU, and the units it has: half of them go without. */
const ORDERS_PER_SCARCE_SKU = 8;
const UNITS_PER_SCARCE_SKU = 4;

/**
 * The longest a cancelled order runs past its hold before the cancel: the capture comes next and
 * takes tens of milliseconds, so cancels spread over this land on both sides of it.
 */
const MAX_CANCEL_AFTER_MS = 400;

/**
 * The run's orders, from its seed: about 65% that should complete, 15% declined by the card
 * (Stripe's `pm_card_visa_chargeDeclined`), 12% racing for scarce SKUs, where the losers find no
 * stock to reserve and never reach Stripe, and 8% cancelled while they run, so that some holds
 * are voided (cancelled before the capture) and some captures refunded (after it).
 */
export function buildOrderMix(count: number, runTag: string, random: () => number): OrderMix {
  const scarceSkus = Math.max(1, Math.ceil((count * 0.12) / ORDERS_PER_SCARCE_SKU));
  const orders: ChaosOrder[] = [];
  for (let index = 0; index < count; index++) {
    const draw = random();
    const intent: OrderIntent = draw < 0.65 ? 'success' : draw < 0.8 ? 'decline' : draw < 0.92 ? 'scarce' : 'cancel';
    const sku =
      intent === 'scarce' ? `chaos-scarce-${Math.floor(random() * scarceSkus)}` : `chaos-sku-${Math.floor(random() * PLENTIFUL_SKUS)}`;
    orders.push({
      intent,
      // Half while the hold is being placed (a void), half around the capture (mostly refunds).
      ...(intent === 'cancel' && { cancelAt: random() < 0.5 ? ('authorizing' as const) : Math.floor(random() * MAX_CANCEL_AFTER_MS) }),
      order: {
        orderId: `chaos-${runTag}-${index}`,
        tenantId: DEFAULT_TENANT_ID,
        customerId: `cust-${Math.floor(random() * 1000)}`,
        amount: 100 + Math.floor(random() * 99_900),
        currency: 'usd',
        paymentMethod: intent === 'decline' ? 'pm_card_visa_chargeDeclined' : 'pm_card_visa',
        sku,
        quantity: intent === 'scarce' ? 1 : 1 + Math.floor(random() * 3),
      },
    });
  }
  return {
    orders,
    stock: [
      ...Array.from({ length: PLENTIFUL_SKUS }, (_, i) => ({ sku: `chaos-sku-${i}`, available: 1_000_000 })),
      ...Array.from({ length: scarceSkus }, (_, i) => ({ sku: `chaos-scarce-${i}`, available: UNITS_PER_SCARCE_SKU })),
    ],
  };
}

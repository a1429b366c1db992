import type { OrderInput } from '../domain/order-input.js';

/** What an order is built to meet. Faults may still change where it ends. */
export type OrderIntent = 'success' | 'decline' | 'scarce';

export interface ChaosOrder {
  order: OrderInput;
  intent: OrderIntent;
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
 * The run's orders, from its seed: about 70% that should complete, 15% declined by the card
 * (Stripe's `pm_card_visa_chargeDeclined`), and 15% racing for scarce SKUs, where the losers
 * are charged, find no stock and are refunded.
 */
export function buildOrderMix(count: number, runTag: string, random: () => number): OrderMix {
  const scarceSkus = Math.max(1, Math.ceil((count * 0.15) / ORDERS_PER_SCARCE_SKU));
  const orders: ChaosOrder[] = [];
  for (let index = 0; index < count; index++) {
    const draw = random();
    const intent: OrderIntent = draw < 0.7 ? 'success' : draw < 0.85 ? 'decline' : 'scarce';
    const sku =
      intent === 'scarce' ? `chaos-scarce-${Math.floor(random() * scarceSkus)}` : `chaos-sku-${Math.floor(random() * PLENTIFUL_SKUS)}`;
    orders.push({
      intent,
      order: {
        orderId: `chaos-${runTag}-${index}`,
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

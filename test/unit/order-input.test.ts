// Proves the order input schema accepts valid orders (currency lower-cased), reports every problem
// by name at once, and names the workflow after the order.
import { describe, expect, it } from 'vitest';
import { parseOrderInput, workflowIdForOrder } from '../../src/domain/order-input.js';

const valid = {
  orderId: 'A-1001',
  customerId: 'cust-42',
  amount: 1999,
  currency: 'USD',
  paymentMethod: 'pm_card_visa',
  sku: 'SKU-1',
  quantity: 2,
};

function problemsOf(raw: unknown): string[] {
  const parsed = parseOrderInput(raw);
  return parsed.ok ? [] : parsed.problems;
}

describe('order input schema', () => {
  it('accepts a valid order and normalises the currency to Stripe lower case', () => {
    const parsed = parseOrderInput(valid);
    expect(parsed).toEqual({ ok: true, value: { ...valid, tenantId: 'default', currency: 'usd' } });
  });

  it.each([
    ['a zero amount', { amount: 0 }, 'amount: amount must be positive'],
    ['a fractional amount', { amount: 19.99 }, 'amount: amount must be a whole number of minor units'],
    ['an amount over Stripe’s limit', { amount: 100_000_000 }, 'amount: amount must be at most 99999999'],
    ['an unknown currency', { currency: 'xyz' }, 'currency: currency must be a three-letter ISO 4217 code'],
    ['a four-letter currency', { currency: 'usdt' }, 'currency: currency must be a three-letter ISO 4217 code'],
    ['an order ID with spaces', { orderId: 'A 1' }, 'orderId: order ID must be 1-64 characters'],
    ['an over-long order ID', { orderId: 'A'.repeat(65) }, 'orderId: order ID must be 1-64 characters'],
    ['a card number instead of a PaymentMethod', { paymentMethod: '4242424242424242' }, 'paymentMethod: payment method must be a Stripe PaymentMethod ID'],
    ['a zero quantity', { quantity: 0 }, 'quantity: quantity must be at least 1'],
    ['an amount below Stripe’s minimum for USD', { amount: 49 }, 'amount: amount must be at least 50 minor units for USD'],
    ['an amount below Stripe’s minimum for GBP', { amount: 29, currency: 'gbp' }, 'amount: amount must be at least 30 minor units for GBP'],
    ['an amount below Stripe’s minimum for a zero-decimal JPY', { amount: 49, currency: 'JPY' }, 'amount: amount must be at least 50 minor units for JPY'],
    ['a tenant ID with a slash', { tenantId: 'a/b' }, 'tenantId: tenant ID must be 1-64 characters'],
  ])('refuses %s with a message that says what to fix', (_label, change, message) => {
    expect(problemsOf({ ...valid, ...change }).join('\n')).toContain(message);
  });

  it('accepts the minimum itself, and any amount in a currency without a listed minimum', () => {
    expect(parseOrderInput({ ...valid, amount: 50 }).ok).toBe(true);
    expect(parseOrderInput({ ...valid, amount: 1, currency: 'isk' }).ok).toBe(true);
  });

  it('reports every problem at once, not just the first', () => {
    expect(problemsOf({ ...valid, amount: -1, currency: 'xx', quantity: 0 })).toHaveLength(3);
  });

  it('refuses a missing field by name', () => {
    const { sku: _sku, ...withoutSku } = valid;
    expect(problemsOf(withoutSku)).toEqual(['sku: SKU is required']);
  });

  it('names the workflow after the order', () => {
    expect(workflowIdForOrder('A-1001')).toBe('order-payment-A-1001');
  });
});

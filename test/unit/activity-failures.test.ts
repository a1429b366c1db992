// Proves the one mapping from the domain's errors to Temporal's ApplicationFailure: every final
// error becomes non-retryable with its type and details, declines and out-of-stock are BENIGN,
// a held uniqueness constraint is final, and anything else is left to the retry policy.
import { ApplicationFailure } from '@temporalio/common';
import { DatabaseError } from 'pg';
import { describe, expect, it } from 'vitest';
import { mappingFailures, toActivityFailure } from '../../src/activities/failures.js';
import {
  AllocationReleasedError,
  AuthorizationExpiredError,
  ChargeAttemptExpiredError,
  FailureType,
  IdempotencyConflictError,
  LedgerDuplicateError,
  NeedsReviewError,
  OrderAlreadyChargedError,
  OrderNotConfirmableError,
  OutOfStockError,
  PaymentAttemptExpiredError,
  PaymentDeclinedError,
  PaymentIncompleteError,
  StripeInvalidRequestError,
  UnknownOrderError,
  type OrderPaymentError,
} from '../../src/domain/failures.js';

function mapped(error: unknown): ApplicationFailure {
  const failure = toActivityFailure(error);
  expect(failure).toBeInstanceOf(ApplicationFailure);
  return failure as ApplicationFailure;
}

const finals: [OrderPaymentError, FailureType, unknown[] | undefined][] = [
  [new PaymentDeclinedError({ code: 'card_declined', declineCode: 'insufficient_funds', paymentIntentId: 'pi_1' }), FailureType.PaymentDeclined, [{ code: 'card_declined', declineCode: 'insufficient_funds', paymentIntentId: 'pi_1' }]],
  [new OutOfStockError('sku-1', 3, true), FailureType.OutOfStock, [{ sku: 'sku-1', requested: 3 }]],
  [new PaymentIncompleteError('pi_2', 'requires_action', 'payment pi_2 cannot be authorized'), FailureType.PaymentIncomplete, [{ paymentIntentId: 'pi_2', status: 'requires_action' }]],
  [new PaymentAttemptExpiredError('closed as never authorized'), FailureType.PaymentAttemptExpired, undefined],
  [new ChargeAttemptExpiredError('closed as never charged'), FailureType.ChargeAttemptExpired, undefined],
  [new AuthorizationExpiredError('pi_3', 'lapsed'), FailureType.AuthorizationExpired, [{ paymentIntentId: 'pi_3' }]],
  [new IdempotencyConflictError('stock', 'run/reserve-stock'), FailureType.IdempotencyConflict, [{ scope: 'stock', key: 'run/reserve-stock' }]],
  [new LedgerDuplicateError('k2', 'ledger_one_charge_per_order', 'k1'), FailureType.IdempotencyConflict, [{ scope: 'ledger', key: 'k2', guard: 'ledger_one_charge_per_order', existingKey: 'k1' }]],
  [new OrderAlreadyChargedError('O-1'), FailureType.OrderAlreadyCharged, [{ orderId: 'O-1' }]],
  [new UnknownOrderError('O-2'), FailureType.UnknownOrder, [{ orderId: 'O-2' }]],
  [new OrderNotConfirmableError("order O-3 cannot be confirmed from status 'compensated'", { status: 'compensated' }), FailureType.OrderNotConfirmable, [{ status: 'compensated' }]],
  [new AllocationReleasedError('run/reserve-stock'), FailureType.OrderNotConfirmable, [{ key: 'run/reserve-stock' }]],
  [new StripeInvalidRequestError('Stripe refused the request', { code: 'parameter_invalid' }), FailureType.StripeInvalidRequest, [{ code: 'parameter_invalid' }]],
  [new NeedsReviewError('a person must look'), FailureType.NeedsReview, undefined],
];

describe('toActivityFailure', () => {
  it.each(finals.map(([error, type, details]) => ({ name: error.name, error, type, details })))(
    '$name becomes a non-retryable $type with its message and details',
    ({ error, type, details }) => {
      const failure = mapped(error);
      expect(failure).toMatchObject({ type, message: error.message, nonRetryable: true });
      expect(failure.details).toEqual(details);
    },
  );

  it('marks only the business outcomes (a decline, no stock) BENIGN: they log quietly and count as no failure', () => {
    const benign = finals.filter(([error]) => mapped(error).category === 'BENIGN').map(([error]) => error.name);
    expect(benign.sort()).toEqual(['OutOfStockError', 'PaymentDeclinedError']);
  });

  it('an unknown order is final: retrying cannot create the order', () => {
    expect(mapped(new UnknownOrderError('O-9'))).toMatchObject({ type: FailureType.UnknownOrder, nonRetryable: true, message: "order 'O-9' is not recorded" });
  });

  it('a uniqueness constraint that held is a final conflict naming the constraint', () => {
    const violation = Object.assign(new DatabaseError('duplicate key value violates unique constraint', 0, 'error'), {
      code: '23505',
      constraint: 'orders_charge_key_key',
      detail: 'Key (charge_key)=(k) already exists.',
    });
    expect(mapped(violation)).toMatchObject({
      type: FailureType.IdempotencyConflict,
      nonRetryable: true,
      message: "uniqueness guard 'orders_charge_key_key' refused a duplicate: Key (charge_key)=(k) already exists.",
    });
  });

  it('leaves everything else to the retry policy: a lost connection, a terminated backend, a plain error', () => {
    const terminated = Object.assign(new DatabaseError('terminating connection due to administrator command', 0, 'error'), { code: '57P01' });
    const lost = new Error('Connection terminated unexpectedly');
    expect(toActivityFailure(terminated)).toBe(terminated);
    expect(toActivityFailure(lost)).toBe(lost);
  });

  it('mappingFailures passes a result through and throws the mapped failure', async () => {
    await expect(mappingFailures(() => Promise.resolve(7))).resolves.toBe(7);
    await expect(mappingFailures(() => Promise.reject(new OutOfStockError('sku-2', 1, false)))).rejects.toMatchObject({
      type: FailureType.OutOfStock,
      nonRetryable: true,
      category: 'BENIGN',
      message: "unknown SKU 'sku-2'",
    });
  });
});

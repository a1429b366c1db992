// The failure vocabulary: the failure types the saga and its callers branch on, and the one
// error hierarchy that carries them (one base class, subclasses that fix their type, as
// stripe-node's Error.ts does). src/activities/failures.ts turns them into ApplicationFailures.
import type { ApplicationFailureCategory } from '@temporalio/common';

/**
 * Failure types the saga and its callers branch on. Activities raise them as non-retryable
 * ApplicationFailures of these types; the workflow and the starter compare `failure.type`
 * against these constants, never parse messages.
 */
export const FailureType = {
  /** The card was declined. Carries the decline code. Nothing was charged. */
  PaymentDeclined: 'PaymentDeclined',
  /** A key was reused with a different payload (I7). Nothing was applied. */
  IdempotencyConflict: 'IdempotencyConflict',
  /** Not enough stock for the order, or an unknown SKU. Nothing was allocated. */
  OutOfStock: 'OutOfStock',
  /** The order's input failed validation. Nothing was started downstream. */
  InvalidOrderInput: 'InvalidOrderInput',
  /**
   * The payment did not complete synchronously (3-D Secure, async methods). The saga treats it
   * as not charged and cancels the PaymentIntent during compensation.
   */
  PaymentIncomplete: 'PaymentIncomplete',
  /**
   * A pending charge key outlived Stripe's key retention and Stripe holds no charge for the
   * order: the attempt is closed as never charged rather than re-sent under a forgotten key.
   */
  ChargeAttemptExpired: 'ChargeAttemptExpired',
  /**
   * The hold lapsed before it was captured: Stripe expired the authorization, or the saga's
   * capture deadline (`capture_before` less a margin) passed while the capture could not go
   * through. Nothing was captured; the saga voids what is left and compensates.
   */
  AuthorizationExpired: 'AuthorizationExpired',
  /**
   * A pending authorization key outlived Stripe's key retention and Stripe holds no
   * PaymentIntent for the order, or a compensation closed the key before any attempt got an
   * answer: the attempt is closed as never authorized rather than re-sent under a forgotten key.
   */
  PaymentAttemptExpired: 'PaymentAttemptExpired',
  /** The order's charge was claimed by another key: charging again would be a second charge. */
  OrderAlreadyCharged: 'OrderAlreadyCharged',
  /**
   * The order is not recorded: a step ran for an order the saga never wrote. Retrying cannot
   * create it, so the step fails at once instead of retrying until its timeout.
   */
  UnknownOrder: 'UnknownOrder',
  /**
   * The order cannot move forward any more: it already ended (a reset run replaying an order
   * whose allocation was released or that was compensated). The saga compensates again, which
   * replays every compensation as a no-op.
   */
  OrderNotConfirmable: 'OrderNotConfirmable',
  /**
   * An order ID was presented with a different order than its running workflow's (I7 at the
   * door): the payment-outcome update's validator refuses it before anything enters history.
   */
  OrderIdConflict: 'OrderIdConflict',
  /**
   * Stripe refused a request as malformed (a 400 that is not a decline): a bug or a
   * misconfiguration. Retrying sends the same request, so the step stops and the key stays
   * pending: nothing claims the payment did or did not happen.
   */
  StripeInvalidRequest: 'StripeInvalidRequest',
  /** A compensation failed permanently: a person must look at this order. */
  NeedsReview: 'NeedsReview',
} as const;

export type FailureType = (typeof FailureType)[keyof typeof FailureType];

/**
 * A final outcome of a step: no retry can change it. Each subclass fixes its failure type;
 * `details` travel with the ApplicationFailure for the workflow to read, and `category` is
 * Temporal's: BENIGN marks an expected business outcome (a decline, no stock), which the worker
 * logs at DEBUG and leaves out of its failure metrics.
 */
export abstract class OrderPaymentError extends Error {
  abstract readonly type: FailureType;
  readonly category: ApplicationFailureCategory | undefined = undefined;
  constructor(
    message: string,
    readonly details?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
  }
}

/** An expected business outcome rather than a fault: it logs quietly and counts as no failure. */
abstract class BusinessOutcome extends OrderPaymentError {
  override readonly category = 'BENIGN' as const;
}

/** The card was declined (or the PaymentIntent was cancelled before it held). */
export class PaymentDeclinedError extends BusinessOutcome {
  override readonly name = 'PaymentDeclinedError';
  readonly type = FailureType.PaymentDeclined;
  constructor(decline: { code: string; declineCode: string | null; paymentIntentId: string | null }) {
    super(`card declined: ${decline.declineCode ?? decline.code}`, { ...decline });
  }
}

/** Not enough stock of the SKU, or no such SKU (`known: false`). */
export class OutOfStockError extends BusinessOutcome {
  override readonly name = 'OutOfStockError';
  readonly type = FailureType.OutOfStock;
  constructor(
    readonly sku: string,
    readonly requested: number,
    readonly known: boolean,
  ) {
    super(known ? `not enough stock of '${sku}' for ${requested}` : `unknown SKU '${sku}'`, { sku, requested });
  }
}

/** The payment needs the customer (3-D Secure) or an async method: it did not complete in the call. */
export class PaymentIncompleteError extends OrderPaymentError {
  override readonly name = 'PaymentIncompleteError';
  readonly type = FailureType.PaymentIncomplete;
  constructor(
    readonly paymentIntentId: string,
    readonly status: string,
    message: string,
  ) {
    super(message, { paymentIntentId, status });
  }
}

/** A pending authorization key was closed as never authorized (see FailureType.PaymentAttemptExpired). */
export class PaymentAttemptExpiredError extends OrderPaymentError {
  override readonly name = 'PaymentAttemptExpiredError';
  readonly type = FailureType.PaymentAttemptExpired;
}

/** A pending charge key was closed as never charged (see FailureType.ChargeAttemptExpired). */
export class ChargeAttemptExpiredError extends OrderPaymentError {
  override readonly name = 'ChargeAttemptExpiredError';
  readonly type = FailureType.ChargeAttemptExpired;
}

/** The hold lapsed before it was captured. */
export class AuthorizationExpiredError extends OrderPaymentError {
  override readonly name = 'AuthorizationExpiredError';
  readonly type = FailureType.AuthorizationExpired;
  constructor(paymentIntentId: string, reason: string) {
    super(`hold ${paymentIntentId} expired: ${reason}`, { paymentIntentId });
  }
}

/**
 * The same key arrived with a different payload (I7). Never retried: retrying cannot make two
 * different intents one, and applying either would be a guess.
 */
export class IdempotencyConflictError extends OrderPaymentError {
  override readonly name: string = 'IdempotencyConflictError';
  readonly type = FailureType.IdempotencyConflict;
  constructor(
    readonly scope: string,
    readonly key: string,
    message = `idempotency key '${key}' (${scope}) was already used with a different payload; nothing was applied`,
    details: Readonly<Record<string, unknown>> = { scope, key },
  ) {
    super(message, details);
  }
}

/**
 * The ledger already holds this Stripe object, or a charge for this order, under another key
 * (I1 at the ledger). The constraint is the second line of defence behind the idempotency key:
 * never retried, because a retry would meet the same row.
 */
export class LedgerDuplicateError extends IdempotencyConflictError {
  override readonly name = 'LedgerDuplicateError';
  constructor(
    key: string,
    readonly guard: 'ledger_transactions_stripe_object_id_key' | 'ledger_one_charge_per_order',
    readonly existingKey: string,
  ) {
    super('ledger', key, `ledger posting '${key}' refused by ${guard}: the ledger already holds it under key '${existingKey}'; nothing was applied`, {
      scope: 'ledger',
      key,
      guard,
      existingKey,
    });
  }
}

/** Any other uniqueness constraint that held: retrying would meet it again. */
export class UniquenessGuardError extends OrderPaymentError {
  override readonly name = 'UniquenessGuardError';
  readonly type = FailureType.IdempotencyConflict;
  constructor(
    readonly guard: string,
    detail: string,
  ) {
    super(`uniqueness guard '${guard}' refused a duplicate: ${detail}`);
  }
}

/** The order's charge was claimed under another key; charging again would be a second charge. */
export class OrderAlreadyChargedError extends OrderPaymentError {
  override readonly name = 'OrderAlreadyChargedError';
  readonly type = FailureType.OrderAlreadyCharged;
  constructor(readonly orderId: string) {
    super(`order '${orderId}' already has a charge under another idempotency key; refusing to charge it again`, { orderId });
  }
}

/** No order is recorded under this ID. */
export class UnknownOrderError extends OrderPaymentError {
  override readonly name = 'UnknownOrderError';
  readonly type = FailureType.UnknownOrder;
  constructor(readonly orderId: string) {
    super(`order '${orderId}' is not recorded`, { orderId });
  }
}

/** The order already ended otherwise: it cannot move forward (see FailureType.OrderNotConfirmable). */
export class OrderNotConfirmableError extends OrderPaymentError {
  override readonly name: string = 'OrderNotConfirmableError';
  readonly type = FailureType.OrderNotConfirmable;
}

/** The allocation under this key was made and later released: it cannot be replayed as held. */
export class AllocationReleasedError extends OrderNotConfirmableError {
  override readonly name = 'AllocationReleasedError';
  constructor(readonly key: string) {
    super(`allocation '${key}' was released by a compensation; it cannot be held again under the same key`, { key });
  }
}

/** Stripe refused a request as malformed (see FailureType.StripeInvalidRequest). */
export class StripeInvalidRequestError extends OrderPaymentError {
  override readonly name = 'StripeInvalidRequestError';
  readonly type = FailureType.StripeInvalidRequest;
}

/** Something no step may decide alone (a hold captured by hand, a refused refund): a person must look. */
export class NeedsReviewError extends OrderPaymentError {
  override readonly name = 'NeedsReviewError';
  readonly type = FailureType.NeedsReview;
}

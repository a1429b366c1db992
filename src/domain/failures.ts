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
  /** A compensation failed permanently: a person must look at this order. */
  NeedsReview: 'NeedsReview',
} as const;

export type FailureType = (typeof FailureType)[keyof typeof FailureType];

/** Failures that no retry can fix. Passed to every activity's retry policy. */
export const NON_RETRYABLE_FAILURES: FailureType[] = Object.values(FailureType);

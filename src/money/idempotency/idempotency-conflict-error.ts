/**
 * The same key arrived with a different payload (I7). Never retried: retrying cannot make two
 * different intents one, and applying either would be a guess.
 */
export class IdempotencyConflictError extends Error {
  override readonly name = 'IdempotencyConflictError';
  constructor(
    readonly scope: string,
    readonly key: string,
  ) {
    super(`idempotency key '${key}' (${scope}) was already used with a different payload; nothing was applied`);
  }
}

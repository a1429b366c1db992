/**
 * The emulator's notion of "now". Tests move it forward to make idempotency keys expire without
 * waiting 24 hours; object timestamps follow it too, so what a test sees stays consistent.
 */
export class Clock {
  #offsetMs = 0;

  nowMs(): number {
    return Date.now() + this.#offsetMs;
  }

  /** Unix seconds, the unit of every `created` field in Stripe's API. */
  nowSeconds(): number {
    return Math.floor(this.nowMs() / 1000);
  }

  get offsetMs(): number {
    return this.#offsetMs;
  }

  advance(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0) {
      throw new RangeError(`clock can only move forward by a finite number of ms, got ${String(ms)}`);
    }
    this.#offsetMs += ms;
    return this.nowMs();
  }

  reset(): void {
    this.#offsetMs = 0;
  }
}

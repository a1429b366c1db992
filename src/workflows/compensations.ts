/**
 * The saga's undo list. A compensation is registered *before* its step is attempted: a step
 * whose outcome is unknown (timed out, cancelled, its worker killed) may have happened, and
 * each compensation is written to resolve that and undo only what exists.
 */
export class Compensations {
  private readonly steps: { name: string; run: () => Promise<void> }[] = [];

  add(name: string, run: () => Promise<void>): void {
    this.steps.push({ name, run });
  }

  /** Drops the newest compensation: its step is known not to have happened. */
  discardLast(): void {
    this.steps.pop();
  }

  get size(): number {
    return this.steps.length;
  }

  /**
   * Runs every compensation, newest first. Each one retries inside its activity until it
   * succeeds; a failure that reaches here is final and stops the sequence, so nothing is undone
   * out of order. The caller turns it into needs_review.
   */
  async runInReverse(): Promise<void> {
    for (const step of [...this.steps].reverse()) {
      try {
        await step.run();
      } catch (error) {
        throw new CompensationFailed(step.name, error);
      }
    }
  }
}

export class CompensationFailed extends Error {
  override readonly name = 'CompensationFailed';
  constructor(
    readonly step: string,
    override readonly cause: unknown,
  ) {
    super(`compensation '${step}' failed: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

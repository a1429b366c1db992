// Test support for the crash rows of the failure matrix: runs an order on a worker process that
// SIGKILLs itself at a failpoint, then finishes it on a fresh worker.
import type { WorkflowHandle } from '@temporalio/client';
import { expect } from 'vitest';
import type { OrderInput } from '../../src/domain/order-input.js';
import type { FailpointName } from '../../src/platform/failpoint.js';
import type { orderPaymentSaga } from '../../src/workflows/index.js';
import type { SagaHarness } from './saga-harness.js';
import { describeExit, startWorkerProcess, type WorkerProcess } from './worker-process.js';
import { withTimeout } from './with-timeout.js';
import { endingOf, type SagaEnding } from './workflow-ending.js';

/**
 * A killed worker never reports its activity; Temporal notices when its heartbeats stop (the
 * heartbeat timeout, 10 s) and then retries the attempt on whichever worker polls. The limits
 * below still allow for the start-to-close timeouts (30 s for Postgres steps, 60 s for Stripe
 * steps and compensations), so a worker that stopped heartbeating is not the only way to pass.
 */
export const CRASH_TEST_TIMEOUT_MS = 420_000;
const KILL_WAIT_MS = 120_000;
const RECOVERY_WAIT_MS = 150_000;

export interface CrashRun {
  order: OrderInput;
  runId: string;
  handle: WorkflowHandle<typeof orderPaymentSaga>;
  ending: SagaEnding;
}

/**
 * Runs an order on a worker process armed with `failpoint`, checks that it died there by
 * SIGKILL, then starts a fresh worker process without failpoints and waits for the run to end.
 * `whileRunning` runs after the start, before the kill (to cancel the order, for instance).
 */
export async function crashThenRecover(
  harness: SagaHarness,
  order: OrderInput,
  failpoint: FailpointName,
  whileRunning?: (handle: WorkflowHandle<typeof orderPaymentSaga>) => Promise<void>,
): Promise<CrashRun> {
  const workers: WorkerProcess[] = [];
  let handle: WorkflowHandle<typeof orderPaymentSaga> | undefined;
  let ended = false;
  try {
    const doomed = await startWorkerProcess(harness, { failpoints: [failpoint] });
    workers.push(doomed);
    const started = await harness.start(order);
    handle = started.handle;
    await whileRunning?.(started.handle);

    const exit = await doomed.waitForExit(KILL_WAIT_MS);
    expect(exit, `the worker armed with ${failpoint} should die by SIGKILL, but it ended with ${describeExit(exit)}:\n${doomed.output()}`).toEqual({
      code: null,
      signal: 'SIGKILL',
    });

    const fresh = await startWorkerProcess(harness);
    workers.push(fresh);
    const ending = await withTimeout(endingOf(started.handle), RECOVERY_WAIT_MS, () =>
      `the run did not end within ${RECOVERY_WAIT_MS} ms of the fresh worker starting; its output:\n${fresh.output()}`,
    );
    ended = true;
    return { order, runId: started.runId, handle: started.handle, ending };
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
    // A failed test must not leave its run behind on the shared dev server.
    if (handle && !ended) await handle.terminate('crash test failed').catch(() => undefined);
  }
}

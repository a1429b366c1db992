// An activity interceptor that heartbeats while any activity with a heartbeat timeout runs, so a
// dead worker's attempt is retried within seconds.
import type { Context } from '@temporalio/activity';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, ActivityInterceptorsFactory, Next } from '@temporalio/worker';

/**
 * Heartbeats for every activity with a heartbeat timeout, for as long as it runs. The beat
 * carries no progress: it only says this worker is alive. A worker that dies mid-attempt
 * (SIGKILL, out of memory, a lost host) then has its attempt retried once the heartbeat timeout
 * passes, in seconds, instead of after the start-to-close timeout, a minute for the charge. The
 * retry is safe for the usual reason: it runs under the same idempotency key.
 */
class HeartbeatWhileRunning implements ActivityInboundCallsInterceptor {
  constructor(private readonly context: Context) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const timeoutMs = this.context.info.heartbeatTimeoutMs;
    if (!timeoutMs) return next(input);
    // Three beats per timeout: one late beat on a busy event loop does not lose the attempt.
    const beat = setInterval(() => {
      this.context.heartbeat();
    }, Math.max(100, Math.floor(timeoutMs / 3)));
    try {
      return await next(input);
    } finally {
      clearInterval(beat);
    }
  }
}

export const heartbeatWhileRunning: ActivityInterceptorsFactory = (context) => ({ inbound: new HeartbeatWhileRunning(context) });

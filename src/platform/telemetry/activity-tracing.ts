// The worker's activity tracing interceptors: the SDK's span per attempt, with the order ID, the
// attempt and the idempotency key added and nothing else about the order.
import { trace } from '@opentelemetry/api';
import type { Context } from '@temporalio/activity';
import { OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, ActivityInterceptorsFactory, Next } from '@temporalio/worker';
import { deriveIdempotencyKey } from '../../money/idempotency/idempotency-key.js';
import { TraceAttribute } from './tracing.js';

/**
 * Inside the SDK's activity span: adds the order ID, the attempt and the idempotency key (the
 * activity's own, derived exactly as the activity derives it). Nothing else about the order: no
 * customer, amount or payment method reaches a span.
 */
class OrderSpanAttributes implements ActivityInboundCallsInterceptor {
  constructor(private readonly context: Context) {}

  execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const span = trace.getActiveSpan();
    if (span) {
      const { info } = this.context;
      span.setAttribute(TraceAttribute.attempt, info.attempt);
      const [first] = input.args as [{ orderId?: unknown; order?: { orderId?: unknown }; originalRunId?: unknown; stepId?: unknown } | undefined];
      const orderId = first?.orderId ?? first?.order?.orderId;
      if (typeof orderId === 'string') span.setAttribute(TraceAttribute.orderId, orderId);
      // A local activity's own ID is a sequence number: its key is made from the step ID its input names.
      const stepId = info.isLocal ? first?.stepId : info.activityId;
      if (typeof first?.originalRunId === 'string' && typeof stepId === 'string') {
        span.setAttribute(TraceAttribute.idempotencyKey, deriveIdempotencyKey({ runId: first.originalRunId, activityId: stepId }));
      }
    }
    return next(input);
  }
}

/** The worker's activity tracing: the SDK's span per attempt (linked to the workflow's, when it sends one), with our attributes. */
export const activityTracing: ActivityInterceptorsFactory[] = [
  (context) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(context), outbound: new OpenTelemetryActivityOutboundInterceptor(context) }),
  (context) => ({ inbound: new OrderSpanAttributes(context) }),
];

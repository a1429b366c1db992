// The workflow's OpenTelemetry spans, made inside the sandbox without OpenTelemetry's SDK: the
// run, each activity it starts (whose headers carry the context to the activity's own span), and
// each signal and update, in the shape and under the names of @temporalio/interceptors-opentelemetry.
import {
  ApplicationFailure,
  ContinueAsNew,
  defaultPayloadConverter,
  proxySinks,
  workflowInfo,
  type ActivityInput,
  type GetLogAttributesInput,
  type LocalActivityInput,
  type Next,
  type SignalInput,
  type UpdateInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptorsFactory,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { ApplicationFailureCategory, type Headers } from '@temporalio/common';
import type { OpenTelemetrySinks, SerializableSpan } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions.js';

/**
 * Why not the SDK's own workflow interceptors: on two cores they cost the saga about 18 ms of
 * worker CPU per order, 40% of its workflow and activity work together (npm run bench,
 * "telemetry"). Every run evaluates its own copy of OpenTelemetry's SDK (with a reused V8 context
 * each run evaluates the bundle's modules; OpenTelemetry's API cannot be preloaded once per
 * worker), builds a tracer provider that parses the environment, and runs every call in an
 * AsyncLocalStorage, whose promise hook then runs for every promise on the workflow thread, on
 * top of the stack trace the SDK records for each. These interceptors make the same spans with
 * none of that: a span is a plain object, the run's span is the parent of what the run starts,
 * and an ended span leaves through the same `exporter` sink, which the worker turns into
 * OpenTelemetry spans with the SDK's makeWorkflowExporter (src/platform/temporal/order-worker.ts).
 *
 * What is the same: the span names (`RunWorkflow:<type>`, `StartActivity:<type>`,
 * `HandleSignal:<name>`, `HandleUpdate:<name>`, `ValidateUpdate:<name>`), the W3C trace context
 * in the `_tracer-data` header the SDK's activity and client interceptors read and write, the
 * statuses (OK; error with the failure's message; unset for a BENIGN failure), no span exported
 * while a run replays, and `trace_id`/`span_id` on the workflow's log lines.
 * What differs: an activity started inside a handler is the run's child, not the handler's (no
 * context follows the run's promises); queries have no spans; a failure is the span's status
 * message, with no exception event. Span IDs derive from the run ID and a counter, not from the
 * workflow's seeded random numbers, so tracing on or off never changes a value the workflow draws.
 */

/** The header the SDK's interceptors carry the trace context in, as a JSON payload of W3C fields. */
const TRACE_HEADER = '_tracer-data';
const SPAN_KIND_INTERNAL = 0;
const STATUS = { unset: 0, ok: 1, error: 2 } as const;
const SCOPE = { name: '@temporalio/interceptor-workflow' };

interface TraceContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  traceState?: string;
}

interface OpenSpan {
  name: string;
  context: TraceContext;
  parentSpanId: string | undefined;
  startMs: number;
  attributes: Record<string, string>;
}

type SpanStatus = SerializableSpan['status'];

/** The W3C context a Temporal header carries, or undefined. */
function contextFrom(headers: Headers): TraceContext | undefined {
  const payload = headers[TRACE_HEADER];
  if (payload === undefined) return undefined;
  let carrier: Record<string, unknown>;
  try {
    carrier = defaultPayloadConverter.fromPayload<Record<string, unknown> | null>(payload) ?? {};
  } catch {
    // A header this run cannot read starts a trace of its own; it must not fail the workflow task.
    return undefined;
  }
  const match = typeof carrier.traceparent === 'string' ? /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(carrier.traceparent) : null;
  if (!match) return undefined;
  return {
    traceId: match[1] as string,
    spanId: match[2] as string,
    traceFlags: Number.parseInt(match[3] as string, 16),
    ...(typeof carrier.tracestate === 'string' && { traceState: carrier.tracestate }),
  };
}

/** The W3C trace flags as two hex digits. */
const traceFlagsHex = ({ traceFlags }: TraceContext): string => traceFlags.toString(16).padStart(2, '0');

/** `headers` with `context` in the SDK's trace header. */
function withContext(headers: Headers, context: TraceContext): Headers {
  const traceparent = `00-${context.traceId}-${context.spanId}-${traceFlagsHex(context)}`;
  const carrier = context.traceState ? { traceparent, tracestate: context.traceState } : { traceparent };
  return { ...headers, [TRACE_HEADER]: defaultPayloadConverter.toPayload(carrier) };
}

/** FNV-1a over `text`, from `seed`: 32 bits. */
function fnv1a(text: string, seed: number): number {
  let hash = seed >>> 0;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** Murmur3's finalizer: spreads every bit of `value` over all 32. */
function mix32(value: number): number {
  let hash = value >>> 0;
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b) >>> 0;
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35) >>> 0;
  return (hash ^ (hash >>> 16)) >>> 0;
}

/**
 * IDs derived from the run ID: the run's trace ID (when no caller passed one) and one span ID per
 * span, numbered. The run ID is hashed once; each ID then costs a few multiplications.
 */
class DerivedIds {
  readonly #seeds: number[];

  constructor(runId: string) {
    this.#seeds = [0x811c9dc5, 0x01000193, 0x9e3779b9, 0x7f4a7c15].map((seed) => fnv1a(runId, seed));
  }

  /** `words` × 8 hex digits for ID number `n`; never all zeros (an invalid ID). */
  id(n: number, words: number): string {
    let id = '';
    for (let word = 0; word < words; word++) {
      id += mix32((this.#seeds[word] as number) ^ Math.imul(n + 1, 0x9e3779b9)).toString(16).padStart(8, '0');
    }
    return /^0+$/.test(id) ? `${id.slice(0, -1)}1` : id;
  }
}

/**
 * The workflow's clock: in the sandbox Date reads Temporal's deterministic time (the current
 * workflow task's), which is what the SDK's interceptors stamp their spans with too.
 */
// eslint-disable-next-line no-restricted-properties -- deterministic here, and only for span timestamps
const workflowNowMs = (): number => Date.now();

const hrTime = (ms: number): [number, number] => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];

/** The status a settled call leaves on its span, as the SDK's interceptors set it. */
function statusOf(error: unknown, acceptable: (error: unknown) => boolean = () => false): SpanStatus {
  if (acceptable(error)) return { code: STATUS.ok };
  const benign = error instanceof ApplicationFailure && error.category === ApplicationFailureCategory.BENIGN;
  const message = error instanceof Error ? error.message : String(error);
  return { code: benign ? STATUS.unset : STATUS.error, message };
}

/** One run's spans: started from a parent context, ended with a status, exported when sampled. */
class RunSpans {
  #sequence = 0;
  #ids: DerivedIds | undefined;
  #run: OpenSpan | undefined;
  readonly #exporter = proxySinks<OpenTelemetrySinks>().exporter;

  /** The run's own span, the parent of what the run starts; undefined before `execute`. */
  get run(): OpenSpan | undefined {
    return this.#run;
  }

  start(name: string, parent: TraceContext | undefined, attributes: Record<string, string> = {}): OpenSpan {
    this.#ids ??= new DerivedIds(workflowInfo().runId);
    const sequence = this.#sequence++;
    return {
      name,
      context: {
        // The trace ID is ID number -1: distinct from every span's.
        traceId: parent?.traceId ?? this.#ids.id(-1, 4),
        spanId: this.#ids.id(sequence, 2),
        traceFlags: parent?.traceFlags ?? 1,
        ...(parent?.traceState !== undefined && { traceState: parent.traceState }),
      },
      parentSpanId: parent?.spanId,
      startMs: workflowNowMs(),
      attributes,
    };
  }

  startRun(name: string, parent: TraceContext | undefined): OpenSpan {
    this.#run = this.start(name, parent);
    return this.#run;
  }

  end(span: OpenSpan, status: SpanStatus): void {
    // Not sampled upstream: the context travels on, nothing is recorded.
    if ((span.context.traceFlags & 1) === 0) return;
    const endMs = workflowNowMs();
    this.#exporter.export([
      {
        name: span.name,
        kind: SPAN_KIND_INTERNAL,
        spanContext: span.context,
        parentSpanId: span.parentSpanId,
        startTime: hrTime(span.startMs),
        endTime: hrTime(endMs),
        duration: hrTime(endMs - span.startMs),
        status,
        attributes: span.attributes,
        links: [],
        events: [],
        ended: true,
        droppedAttributesCount: 0,
        droppedLinksCount: 0,
        droppedEventsCount: 0,
        instrumentationLibrary: SCOPE,
      },
    ]);
  }

  /**
   * Runs `call` in `span`, ending the span with the call's outcome. One `then`, not an async
   * wrapper: the SDK's sandbox records a stack trace for every promise a workflow creates, and an
   * `await` under its promise hook creates a second, throwaway one.
   */
  around<T>(span: OpenSpan, call: () => Promise<T>, acceptable?: (error: unknown) => boolean): Promise<T> {
    let pending: Promise<T>;
    try {
      pending = call();
    } catch (error) {
      this.end(span, statusOf(error, acceptable));
      throw error;
    }
    return pending.then(
      (result) => {
        this.end(span, { code: STATUS.ok });
        return result;
      },
      (error: unknown) => {
        this.end(span, statusOf(error, acceptable));
        throw error;
      },
    );
  }
}

class RunInbound implements WorkflowInboundCallsInterceptor {
  constructor(private readonly spans: RunSpans) {}

  execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const span = this.spans.startRun(`RunWorkflow:${workflowInfo().workflowType}`, contextFrom(input.headers));
    return this.spans.around(span, () => next(input), (error) => error instanceof ContinueAsNew);
  }

  handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>): Promise<void> {
    const span = this.spans.start(`HandleSignal:${input.signalName}`, contextFrom(input.headers));
    return this.spans.around(span, () => next(input));
  }

  handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>): Promise<unknown> {
    const span = this.spans.start(`HandleUpdate:${input.name}`, contextFrom(input.headers), { temporalUpdateId: input.updateId });
    return this.spans.around(span, () => next(input));
  }

  validateUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>): void {
    const span = this.spans.start(`ValidateUpdate:${input.name}`, contextFrom(input.headers), { temporalUpdateId: input.updateId });
    try {
      next(input);
      this.spans.end(span, { code: STATUS.ok });
    } catch (error) {
      this.spans.end(span, statusOf(error));
      throw error;
    }
  }
}

class RunOutbound implements WorkflowOutboundCallsInterceptor {
  constructor(private readonly spans: RunSpans) {}

  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>): Promise<unknown> {
    return this.#startActivity(input, next);
  }

  scheduleLocalActivity(input: LocalActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>): Promise<unknown> {
    return this.#startActivity(input, next);
  }

  getLogAttributes(input: GetLogAttributesInput, next: Next<WorkflowOutboundCallsInterceptor, 'getLogAttributes'>): Record<string, unknown> {
    const run = this.spans.run;
    if (!run) return next(input);
    return next({ trace_id: run.context.traceId, span_id: run.context.spanId, trace_flags: traceFlagsHex(run.context), ...input });
  }

  /** An activity's start, local or not: a span in the run's, whose context the activity's headers carry. */
  #startActivity<Input extends ActivityInput | LocalActivityInput>(input: Input, next: (input: Input) => Promise<unknown>): Promise<unknown> {
    const span = this.spans.start(`StartActivity:${input.activityType}`, this.spans.run?.context);
    return this.spans.around(span, () => next({ ...input, headers: withContext(input.headers, span.context) }));
  }
}

/**
 * The workflow's tracing interceptors. Part of the traced prebundled file
 * (src/platform/temporal/bundle-workflows.ts), and of a tracing worker's bundle from source
 * (src/platform/temporal/order-worker.ts); see the README's Traces section for the rollout rule.
 */
export const interceptors: WorkflowInterceptorsFactory = () => {
  const spans = new RunSpans();
  return { inbound: [new RunInbound(spans)], outbound: [new RunOutbound(spans)] };
};

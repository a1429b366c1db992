-- Traces across the outbox (issue 15): the W3C trace context (`traceparent`, and `tracestate`
-- when there is one) of the span that wrote the row, as the propagator's carrier, e.g.
-- {"traceparent": "00-<trace id>-<span id>-01"}. The dispatcher publishes the row with it in the
-- NATS message's headers, so the consumer's span joins the trace of the activity that wrote the
-- event. Null when the writer was not tracing, and for rows written before this migration: they
-- are published as before, without a parent.
alter table outbox
  add column trace_context jsonb
  check (trace_context is null or jsonb_typeof(trace_context) = 'object');

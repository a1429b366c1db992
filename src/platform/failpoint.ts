/**
 * Named points where a test can make the worker (or the outbox dispatcher) die as a crash would:
 * SIGKILL, no cleanup, no completion reported to Temporal, no outbox row marked sent. Enabled
 * only by `FAILPOINTS` (comma-separated names), read once at load; when it is unset every call
 * is a single Set lookup on an empty set.
 */
export type FailpointName =
  | 'reserve.after-commit'
  | 'authorize.after-stripe'
  | 'authorize.after-commit'
  | 'capture.after-stripe'
  | 'capture.after-ledger'
  | 'void.after-stripe'
  | 'refund.after-ledger'
  | 'charge.after-stripe'
  | 'charge.after-ledger'
  | 'allocate.after-commit'
  | 'refund.after-stripe'
  | 'refund.after-commit'
  | 'record-refund.after-ledger'
  | 'release-stock.after-commit'
  | 'confirm.after-commit'
  | 'outbox.after-publish'
  | 'dispute.after-booking';

const enabled = new Set((process.env.FAILPOINTS ?? '').split(',').map((name) => name.trim()).filter(Boolean));

export function failpoint(name: FailpointName): void {
  if (enabled.has(name)) process.kill(process.pid, 'SIGKILL');
}

/** The fields of the one line logged per request. */
export interface RequestLogLine {
  method: string;
  path: string;
  status: number;
  idempotencyKey: string | null;
  replayed: boolean;
  /** True when a drop_response fault destroyed the socket instead of answering. */
  dropped: boolean;
  requestId: string | null;
  durationMs: number;
}

/** Satisfied by a pino logger; anything with the same `info` works. */
export interface RequestLogger {
  info(line: RequestLogLine, message: string): void;
}

export function describeRequest(line: RequestLogLine): string {
  const key = line.idempotencyKey ?? '-';
  const fate = line.dropped ? ' dropped' : '';
  return `${line.method} ${line.path} ${line.status}${fate} key=${key} replayed=${line.replayed}`;
}

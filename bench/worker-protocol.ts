/** What the benchmark asks its worker process over IPC. */
export type WorkerRequest = { type: 'stats'; id: number } | { type: 'stop' };

/** What the worker process answers. */
export type WorkerReply =
  | { type: 'ready' }
  | { type: 'stats'; id: number; rss: number; heapUsed: number; heapTotal: number; external: number; cpuMicros: number; roundTrips: number; transactions: number };

export type WorkerStats = Omit<Extract<WorkerReply, { type: 'stats' }>, 'type' | 'id'>;

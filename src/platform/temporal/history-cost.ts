// What one run cost the Temporal server, read from its history: events written, workflow tasks
// (round trips to a worker), activity tasks, local-activity markers, search-attribute upserts, timers.
import type { Client } from '@temporalio/client';
import type { History } from './history-json.js';

type HistoryEvent = NonNullable<History['events']>[number];

/**
 * A run's cost to the server. Every event is a write to its database; every workflow task and
 * every activity task is a round trip to a worker (and, on Temporal Cloud, billed actions).
 */
export interface HistoryCost {
  /** History events: each one a write to the server's database. */
  events: number;
  /** Workflow tasks scheduled: each one a round trip to a worker (failed or timed-out ones included). */
  workflowTasks: number;
  /** Activity tasks scheduled: each one a dispatch to a worker through a task queue, retries aside. */
  activityTasks: number;
  /** Local activities recorded: run inside a workflow task, each one a marker event and no task of its own. */
  localActivities: number;
  /** Search-attribute upserts: each one an event and a visibility write. */
  searchAttributeUpserts: number;
  /** Durable timers started. */
  timers: number;
}

/** The marker the SDK records for each local activity's outcome. */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

function count(events: readonly HistoryEvent[], matches: (event: HistoryEvent) => boolean): number {
  return events.filter(matches).length;
}

/** The cost of a history already read (from the server, or from a recorded fixture). */
export function historyCost(history: History): HistoryCost {
  const events = history.events ?? [];
  return {
    events: events.length,
    workflowTasks: count(events, (event) => Boolean(event.workflowTaskScheduledEventAttributes)),
    activityTasks: count(events, (event) => Boolean(event.activityTaskScheduledEventAttributes)),
    localActivities: count(events, (event) => event.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER),
    searchAttributeUpserts: count(events, (event) => Boolean(event.upsertWorkflowSearchAttributesEventAttributes)),
    timers: count(events, (event) => Boolean(event.timerStartedEventAttributes)),
  };
}

/** The cost of one run as the server holds its history now (a finished run's is final). */
export async function readHistoryCost(client: Client, workflowId: string, runId?: string): Promise<HistoryCost> {
  return historyCost(await client.workflow.getHandle(workflowId, runId).fetchHistory());
}

/** The per-run mean of several runs' costs (a bench reads many), each field rounded to a tenth. */
export function meanHistoryCost(costs: readonly HistoryCost[]): HistoryCost {
  const mean = (field: keyof HistoryCost) => (costs.length === 0 ? 0 : Math.round((costs.reduce((sum, cost) => sum + cost[field], 0) / costs.length) * 10) / 10);
  return {
    events: mean('events'),
    workflowTasks: mean('workflowTasks'),
    activityTasks: mean('activityTasks'),
    localActivities: mean('localActivities'),
    searchAttributeUpserts: mean('searchAttributeUpserts'),
    timers: mean('timers'),
  };
}

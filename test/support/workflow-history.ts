// Test support: reads a run's history by what the saga did (activities scheduled, completed, on
// which attempt) and where the workflow tasks a reset can target are.
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;
export type HistoryEvent = NonNullable<History['events']>[number];

/** Event IDs are protobuf int64s: a number or a Long, depending on the decoder. */
export function eventIdOf(value: HistoryEvent['eventId'] | number): number {
  if (value === null || value === undefined) throw new Error('history event without an event ID');
  return typeof value === 'number' ? value : value.toNumber();
}

/**
 * A run's history, read by what the saga did: which activity was scheduled, completed and on
 * which attempt, and where the workflow tasks between them are (the points a reset can target).
 */
export class SagaHistory {
  private constructor(readonly events: HistoryEvent[]) {}

  static async of(handle: WorkflowHandle): Promise<SagaHistory> {
    const history = await handle.fetchHistory();
    return new SagaHistory(history.events ?? []);
  }

  /** The ActivityTaskScheduled event of the activity with this explicit ID. */
  scheduled(activityId: string): HistoryEvent {
    const matching = this.events.filter((event) => event.activityTaskScheduledEventAttributes?.activityId === activityId);
    if (matching.length !== 1) throw new Error(`expected one scheduled '${activityId}' in the history, found ${matching.length}`);
    return matching[0] as HistoryEvent;
  }

  /** The activity's ActivityTaskStarted: Temporal records only the last attempt's. */
  private lastStarted(activityId: string): HistoryEvent | undefined {
    const scheduledId = eventIdOf(this.scheduled(activityId).eventId);
    return this.events.find(
      (event) => event.activityTaskStartedEventAttributes && eventIdOf(event.activityTaskStartedEventAttributes.scheduledEventId) === scheduledId,
    );
  }

  /** The attempt that finished the activity (Temporal records only the last attempt's start). */
  completedAttempt(activityId: string): number {
    const scheduledId = eventIdOf(this.scheduled(activityId).eventId);
    const started = this.lastStarted(activityId);
    const completed = this.events.some(
      (event) => event.activityTaskCompletedEventAttributes && eventIdOf(event.activityTaskCompletedEventAttributes.scheduledEventId) === scheduledId,
    );
    if (!started?.activityTaskStartedEventAttributes || !completed) throw new Error(`activity '${activityId}' did not complete`);
    return started.activityTaskStartedEventAttributes.attempt ?? 1;
  }

  /**
   * How the attempt before the completing one ended, as Temporal recorded it on the last
   * ActivityTaskStarted: 'HEARTBEAT' when its worker stopped beating, 'START_TO_CLOSE' when the
   * attempt ran out of time, 'failed' for an attempt that reported an error, null on attempt 1.
   */
  previousAttemptEnding(activityId: string): 'HEARTBEAT' | 'START_TO_CLOSE' | 'SCHEDULE_TO_CLOSE' | 'SCHEDULE_TO_START' | 'failed' | null {
    const lastFailure = this.lastStarted(activityId)?.activityTaskStartedEventAttributes?.lastFailure;
    if (!lastFailure) return null;
    const timeoutType = lastFailure.timeoutFailureInfo?.timeoutType;
    if (timeoutType === null || timeoutType === undefined) return 'failed';
    const name = temporal.api.enums.v1.TimeoutType[timeoutType];
    return name.replace(/^TIMEOUT_TYPE_/, '') as 'HEARTBEAT' | 'START_TO_CLOSE' | 'SCHEDULE_TO_CLOSE' | 'SCHEDULE_TO_START';
  }

  /** How the activity ended in the history: completed, failed, timed out, cancelled, or not yet. */
  activityEnding(activityId: string): 'completed' | 'failed' | 'timed-out' | 'cancelled' | null {
    const scheduledId = eventIdOf(this.scheduled(activityId).eventId);
    for (const event of this.events) {
      if (event.activityTaskCompletedEventAttributes && eventIdOf(event.activityTaskCompletedEventAttributes.scheduledEventId) === scheduledId) return 'completed';
      if (event.activityTaskFailedEventAttributes && eventIdOf(event.activityTaskFailedEventAttributes.scheduledEventId) === scheduledId) return 'failed';
      if (event.activityTaskTimedOutEventAttributes && eventIdOf(event.activityTaskTimedOutEventAttributes.scheduledEventId) === scheduledId) return 'timed-out';
      if (event.activityTaskCanceledEventAttributes && eventIdOf(event.activityTaskCanceledEventAttributes.scheduledEventId) === scheduledId) return 'cancelled';
    }
    return null;
  }

  /** The event ID of the activity's ActivityTaskCompleted. */
  completedEventId(activityId: string): number {
    const scheduledId = eventIdOf(this.scheduled(activityId).eventId);
    const completed = this.events.find(
      (event) => event.activityTaskCompletedEventAttributes && eventIdOf(event.activityTaskCompletedEventAttributes.scheduledEventId) === scheduledId,
    );
    if (!completed) throw new Error(`activity '${activityId}' did not complete`);
    return eventIdOf(completed.eventId);
  }

  /**
   * The WorkflowTaskCompleted whose commands scheduled this activity: resetting to it replays
   * everything before and runs the activity (and all after it) again.
   */
  workflowTaskThatScheduled(activityId: string): number {
    const scheduled = this.scheduled(activityId);
    const taskId = scheduled.activityTaskScheduledEventAttributes?.workflowTaskCompletedEventId;
    if (taskId === null || taskId === undefined) throw new Error(`scheduled '${activityId}' names no workflow task`);
    return eventIdOf(taskId);
  }

  /** The event ID of the activity's ActivityTaskScheduled. */
  scheduledEventId(activityId: string): number {
    return eventIdOf(this.scheduled(activityId).eventId);
  }

  /**
   * Where a reset run took over: the WorkflowTaskFailed Temporal writes at the reset point.
   * Events before it were copied from the base run; events after it this run produced itself.
   * The last one counts: a reset of a reset run copies the earlier reset point too.
   */
  resetPoint(): number {
    const failed = this.events.findLast((event) => event.workflowTaskFailedEventAttributes?.baseRunId);
    if (!failed) throw new Error('history has no reset point: this run was not made by a reset');
    return eventIdOf(failed.eventId);
  }

  /**
   * The local activities of this type the run recorded (a marker each, in history order), with the
   * attempt that produced each outcome and the workflow task that recorded it. A local activity
   * has no ID of its own in the history (its ID is a sequence number), so it is found by type.
   */
  localActivities(activityType: string): { eventId: number; attempt: number; workflowTaskCompletedEventId: number; failed: boolean }[] {
    return this.events.flatMap((event) => {
      const marker = event.markerRecordedEventAttributes;
      if (marker?.markerName !== 'core_local_activity') return [];
      const payload = marker.details?.data?.payloads?.[0]?.data;
      if (!payload) return [];
      const data = JSON.parse(Buffer.from(payload).toString('utf8')) as { activity_type?: string; attempt?: number };
      if (data.activity_type !== activityType) return [];
      return [
        {
          eventId: eventIdOf(event.eventId),
          attempt: data.attempt ?? 1,
          workflowTaskCompletedEventId: eventIdOf(marker.workflowTaskCompletedEventId),
          failed: Boolean(marker.failure),
        },
      ];
    });
  }

  /** Workflow tasks that timed out: a worker took the task and never answered (it died, for one). */
  workflowTaskTimeouts(): number {
    return this.events.filter((event) => event.workflowTaskTimedOutEventAttributes).length;
  }

  /** The first event's record of the run this execution chain began with; Reset keeps it. */
  originalExecutionRunId(): string {
    const started = this.events[0]?.workflowExecutionStartedEventAttributes;
    if (!started?.originalExecutionRunId) throw new Error('history does not start with WorkflowExecutionStarted');
    return started.originalExecutionRunId;
  }
}

import { TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";

/**
 * The A2A task state machine, as one table. Read it against the seed's diagram:
 * SUBMITTED -> WORKING -> {terminal | interrupted}, interrupted -> WORKING again,
 * and a task may be canceled, failed or rejected before it starts working.
 * A task may also settle at once (ruling A-26): SUBMITTED -> COMPLETED, INPUT_REQUIRED or
 * AUTH_REQUIRED, as a task-generating agent answers a simple question with a finished task.
 * WORKING -> WORKING is allowed so an agent can publish progress messages.
 */
const S = TaskState;
const LEGAL: ReadonlyMap<TaskState, ReadonlySet<TaskState>> = new Map([
  [S.SUBMITTED, new Set([S.WORKING, S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED, S.INPUT_REQUIRED, S.AUTH_REQUIRED])],
  [S.WORKING, new Set([S.WORKING, S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED, S.INPUT_REQUIRED, S.AUTH_REQUIRED])],
  [S.INPUT_REQUIRED, new Set([S.WORKING, S.FAILED, S.CANCELED])],
  [S.AUTH_REQUIRED, new Set([S.WORKING, S.FAILED, S.CANCELED])],
  [S.COMPLETED, new Set()],
  [S.FAILED, new Set()],
  [S.CANCELED, new Set()],
  [S.REJECTED, new Set()],
]);

/** The state every new task starts in. */
export const INITIAL_STATE = S.SUBMITTED;

export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set([S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED]);
export const INTERRUPTED_STATES: ReadonlySet<TaskState> = new Set([S.INPUT_REQUIRED, S.AUTH_REQUIRED]);
export const ACTIVE_STATES: ReadonlySet<TaskState> = new Set([S.SUBMITTED, S.WORKING]);

/** Every real state; UNSPECIFIED and unknown wire numbers are not states. */
export const ALL_STATES: readonly TaskState[] = [...LEGAL.keys()];

export function isTaskState(value: number): value is TaskState {
  return LEGAL.has(value as TaskState);
}

export function canTransition(from: TaskState, to: TaskState): boolean {
  return LEGAL.get(from)?.has(to) ?? false;
}

export function isTerminal(state: TaskState): boolean {
  return TERMINAL_STATES.has(state);
}

export function isInterrupted(state: TaskState): boolean {
  return INTERRUPTED_STATES.has(state);
}

/** A blocking SendMessage answers once the task is settled: terminal or interrupted. */
export function isSettled(state: TaskState): boolean {
  return isTerminal(state) || isInterrupted(state);
}

/** The wire name of a state, for messages people read ("TASK_STATE_WORKING"). */
export function stateName(state: TaskState): string {
  const name = TaskState[state];
  return name === undefined ? `TASK_STATE_${state}` : `TASK_STATE_${name}`;
}

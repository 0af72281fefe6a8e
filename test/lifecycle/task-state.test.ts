import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import {
  ACTIVE_STATES,
  ALL_STATES,
  INITIAL_STATE,
  INTERRUPTED_STATES,
  TERMINAL_STATES,
  canTransition,
  isInterrupted,
  isSettled,
  isTaskState,
  isTerminal,
  stateName,
} from "../../src/lifecycle/model/task-state.js";
import { EIGHT_STATES, LEGAL_TRANSITIONS, isLegal, stateLabel } from "../support/tasks.js";

const S = TaskState;
const NOT_STATES = [S.UNSPECIFIED, 99 as TaskState, -1 as TaskState];
const EVERY_INPUT = [...EIGHT_STATES, ...NOT_STATES];

describe("task state machine (R-TASK-1, R-TASK-2)", () => {
  it("R-TASK-1: the machine knows exactly the eight real states", () => {
    expect([...ALL_STATES].sort()).toEqual([...EIGHT_STATES].sort());
    for (const s of EIGHT_STATES) expect(isTaskState(s)).toBe(true);
    for (const s of NOT_STATES) expect(isTaskState(s)).toBe(false);
  });

  it("R-TASK-1: every task starts SUBMITTED", () => {
    expect(INITIAL_STATE).toBe(S.SUBMITTED);
  });

  // Exhaustive: every (from, to) over the eight states, UNSPECIFIED and unknown numbers.
  const pairs = EVERY_INPUT.flatMap((from) => EVERY_INPUT.map((to) => [from, to] as const));
  it.each(pairs.map(([from, to]) => [stateLabel(from), stateLabel(to), from, to, isLegal(from, to)]))("R-TASK-1: %s -> %s", (_f, _t, from, to, legal) => {
    expect(canTransition(from as TaskState, to as TaskState)).toBe(legal);
  });

  it("R-TASK-1: the expected table itself names only real states", () => {
    for (const [from, to] of LEGAL_TRANSITIONS) {
      expect(EIGHT_STATES).toContain(from);
      expect(EIGHT_STATES).toContain(to);
    }
    expect(LEGAL_TRANSITIONS).toHaveLength(20);
  });

  it("A-26: a task may settle at once: SUBMITTED -> COMPLETED, INPUT_REQUIRED, AUTH_REQUIRED (and still WORKING, FAILED, CANCELED, REJECTED)", () => {
    const fromSubmitted = EIGHT_STATES.filter((to) => canTransition(S.SUBMITTED, to));
    expect(new Set(fromSubmitted)).toEqual(new Set([S.WORKING, S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED, S.INPUT_REQUIRED, S.AUTH_REQUIRED]));
    expect(canTransition(S.SUBMITTED, S.SUBMITTED)).toBe(false);
  });

  it("R-TASK-2: a terminal state has no way out, not even to itself", () => {
    for (const from of [S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED]) {
      for (const to of EVERY_INPUT) expect(canTransition(from, to)).toBe(false);
    }
  });

  it("R-TASK-1: terminal, interrupted and active sets partition the eight states", () => {
    expect(new Set(TERMINAL_STATES)).toEqual(new Set([S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED]));
    expect(new Set(INTERRUPTED_STATES)).toEqual(new Set([S.INPUT_REQUIRED, S.AUTH_REQUIRED]));
    expect(new Set(ACTIVE_STATES)).toEqual(new Set([S.SUBMITTED, S.WORKING]));
    const union = [...TERMINAL_STATES, ...INTERRUPTED_STATES, ...ACTIVE_STATES];
    expect(union.sort()).toEqual([...EIGHT_STATES].sort());
  });

  it("R-SEND-2: settled means terminal or interrupted; nothing else is settled, terminal or interrupted", () => {
    const settled = new Set([S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED, S.INPUT_REQUIRED, S.AUTH_REQUIRED]);
    for (const s of EVERY_INPUT) {
      expect(isSettled(s)).toBe(settled.has(s));
      expect(isTerminal(s)).toBe([S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED].includes(s));
      expect(isInterrupted(s)).toBe([S.INPUT_REQUIRED, S.AUTH_REQUIRED].includes(s));
    }
  });

  it("stateName gives the wire name, also for unknown numbers", () => {
    expect(stateName(S.INPUT_REQUIRED)).toBe("TASK_STATE_INPUT_REQUIRED");
    expect(stateName(S.UNSPECIFIED)).toBe("TASK_STATE_UNSPECIFIED");
    expect(stateName(99 as TaskState)).toBe("TASK_STATE_99");
  });
});

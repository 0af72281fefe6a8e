import { clone, create } from "@bufbuild/protobuf";
import { PartSchema, TaskSchema, TaskState, type Task } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { applyChange } from "../../src/lifecycle/writes/task-change.js";
import { IllegalTransitionError, InvalidChangeError, type TaskChange } from "../../src/lifecycle/ports/task-repository.js";
import { EIGHT_STATES, artifactChange, artifactTexts, historyChange, isLegal, newTask, stateLabel, statusChange, textArtifact } from "../support/tasks.js";

const S = TaskState;
const T0 = 1_750_000_000_000_000;

function taskIn(state: TaskState): Task {
  const task = newTask({ micros: T0, text: "q" });
  task.status!.state = state;
  return task;
}

/** Applies and returns the error, checking that a refused change left the task exactly as it was. */
function refused(task: Task, change: TaskChange): unknown {
  const before = clone(TaskSchema, task);
  let error: unknown;
  try {
    applyChange(task, change);
  } catch (e) {
    error = e;
  }
  expect(error).toBeDefined();
  expect(task).toEqual(before);
  return error;
}

describe("applyChange, the shared write guard", () => {
  it.each(EIGHT_STATES.flatMap((from) => [...EIGHT_STATES, S.UNSPECIFIED].map((to) => [stateLabel(from), stateLabel(to), from, to])))(
    "R-TASK-1: status %s -> %s follows the machine",
    (_f, _t, from, to) => {
      const task = taskIn(from as TaskState);
      const change = statusChange(to as TaskState, T0 + 1);
      if (isLegal(from as TaskState, to as TaskState)) {
        applyChange(task, change);
        expect(task.status).toEqual(change.kind === "status" && change.status);
      } else {
        const error = refused(task, change);
        expect(error).toBeInstanceOf(IllegalTransitionError);
        expect(error).toMatchObject({ taskId: task.id, from, to });
      }
    },
  );

  it("a status message is also appended to history; a status without one leaves history alone", () => {
    const task = taskIn(S.SUBMITTED);
    applyChange(task, statusChange(S.WORKING, T0 + 1));
    expect(task.history).toHaveLength(1);
    applyChange(task, statusChange(S.WORKING, T0 + 2, "progress"));
    expect(task.history.map((m) => m.parts[0]!.content.value)).toEqual(["q", "progress"]);
    expect(task.status?.message?.parts[0]?.content.value).toBe("progress");
  });

  it.each([S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED].map((s) => [stateLabel(s), s]))(
    "R-TASK-2: a %s task refuses artifacts and messages",
    (_label, state) => {
      for (const change of [artifactChange(textArtifact("a", "x")), artifactChange(textArtifact("a", "x"), true), historyChange("more")]) {
        const task = taskIn(state as TaskState);
        const error = refused(task, change);
        expect(error).toBeInstanceOf(IllegalTransitionError);
        expect(error).toMatchObject({ from: state, to: undefined });
      }
    },
  );

  it.each([S.SUBMITTED, S.WORKING, S.INPUT_REQUIRED, S.AUTH_REQUIRED].map((s) => [stateLabel(s), s]))(
    "a %s task takes artifacts and messages without a state change",
    (_label, state) => {
      const task = taskIn(state as TaskState);
      const status = clone(TaskSchema, task).status;
      applyChange(task, artifactChange(textArtifact("a", "x")));
      applyChange(task, historyChange("more"));
      expect(task.status).toEqual(status);
      expect(task.artifacts).toHaveLength(1);
      expect(task.history.at(-1)?.parts[0]?.content.value).toBe("more");
    },
  );

  it("R-ART-1: an artifact without id, without parts, or with an empty part is refused whole (InvalidChangeError)", () => {
    const emptyLast = textArtifact("a", "fine", "also fine");
    emptyLast.parts.push(create(PartSchema, {}));
    for (const artifact of [textArtifact("", "x"), textArtifact("a"), emptyLast]) {
      for (const append of [false, true]) {
        const task = taskIn(S.WORKING);
        applyChange(task, artifactChange(textArtifact("a", "existing")));
        expect(refused(task, artifactChange(artifact, append))).toBeInstanceOf(InvalidChangeError);
      }
    }
  });

  it("A-17: append=false adds a new id, and replaces an existing one in place", () => {
    const task = taskIn(S.WORKING);
    applyChange(task, artifactChange(textArtifact("a", "1")));
    applyChange(task, artifactChange(textArtifact("b", "2")));
    const replacement = textArtifact("a", "new");
    replacement.name = "v2";
    applyChange(task, artifactChange(replacement, false));
    expect(task.artifacts.map((a) => a.artifactId)).toEqual(["a", "b"]);
    expect(task.artifacts[0]).toEqual(replacement);
  });

  it("R-ART-2, A-17: append=true extends parts (keeping name, merging extensions, newer metadata wins) or starts the artifact", () => {
    const task = taskIn(S.WORKING);
    applyChange(task, artifactChange(textArtifact("new", "x"), true));
    expect(artifactTexts(task.artifacts[0])).toEqual(["x"]);

    const first = textArtifact("a", "1");
    first.name = "report";
    first.extensions = ["ext:one"];
    first.metadata = { v: 1 };
    applyChange(task, artifactChange(first));
    const chunk = textArtifact("a", "2", "3");
    chunk.extensions = ["ext:one", "ext:two"];
    chunk.metadata = { v: 2 };
    applyChange(task, artifactChange(chunk, true, true));
    const merged = task.artifacts.find((a) => a.artifactId === "a")!;
    expect(artifactTexts(merged)).toEqual(["1", "2", "3"]);
    expect(merged.name).toBe("report");
    expect(merged.extensions).toEqual(["ext:one", "ext:two"]);
    expect(merged.metadata).toEqual({ v: 2 });
    expect(task.artifacts.map((a) => a.artifactId)).toEqual(["new", "a"]);
  });

  it("a stored task without a status is refused (InvalidChangeError)", () => {
    const task = taskIn(S.WORKING);
    task.status = undefined;
    expect(refused(task, historyChange("x"))).toBeInstanceOf(InvalidChangeError);
  });
});

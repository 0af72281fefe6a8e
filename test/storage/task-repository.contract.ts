import { clone } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import { ArtifactSchema, PartSchema, Role, TaskSchema, TaskState, type Task } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { TaskNotFoundError } from "../../src/lifecycle/model/errors.js";
import {
  DuplicateTaskError,
  IllegalTransitionError,
  InvalidChangeError,
  VersionConflictError,
  type ListCursor,
  type StoredTask,
  type TaskChange,
  type TaskQuery,
  type TaskRepository,
  type TaskScope,
} from "../../src/lifecycle/ports/task-repository.js";
import {
  Clock,
  EIGHT_STATES,
  PATH_FROM_SUBMITTED,
  artifactChange,
  artifactTexts,
  historyChange,
  isLegal,
  message,
  microsOf,
  newTask,
  scopeOf,
  stateLabel,
  statusChange,
  textArtifact,
  type NewTaskOptions,
} from "../support/tasks.js";

/**
 * The behaviour every TaskRepository must show, whatever it stores into. An
 * implementation's test file calls this with a factory for a fresh, empty repository;
 * `cleanup` closes it and removes whatever it left behind.
 *
 * Timestamps: the caller (the task service) assigns status timestamps, the repository
 * keeps them exactly. Ordering uses microseconds = seconds * 1e6 + floor(nanos / 1000).
 */
export type TaskRepositoryFactory = () => Promise<{ repo: TaskRepository; cleanup(): Promise<void> }>;

const S = TaskState;
const TERMINAL = [S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED];
const NOT_STATES = [S.UNSPECIFIED, 99 as TaskState];

const alice = scopeOf("tenant-1", "alice");
const bob = scopeOf("tenant-1", "bob");
const aliceElsewhere = scopeOf("tenant-2", "alice");

/** ListTasks order: status timestamp newest first, then task id descending. */
function listOrder(a: { micros: number; id: string }, b: { micros: number; id: string }): number {
  if (a.micros !== b.micros) return b.micros - a.micros;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

function query(q: Partial<TaskQuery> = {}): TaskQuery {
  return { pageSize: 100, includeArtifacts: true, ...q };
}

export function describeTaskRepositoryContract(name: string, factory: TaskRepositoryFactory): void {
  describe(`TaskRepository contract: ${name}`, () => {
    let repo: TaskRepository;
    let cleanup: () => Promise<void>;
    let clock: Clock;

    beforeEach(async () => {
      ({ repo, cleanup } = await factory());
      clock = new Clock();
    });
    afterEach(async () => {
      await cleanup();
    });

    async function createTask(scope: TaskScope = alice, options: Partial<NewTaskOptions> = {}): Promise<StoredTask> {
      return repo.create(scope, newTask({ micros: clock.next(), ...options }));
    }

    /** A task driven by legal status changes into `state`; returns its id and version. */
    async function taskIn(state: TaskState, scope: TaskScope = alice, options: Partial<NewTaskOptions> = {}) {
      const stored = await createTask(scope, options);
      let version = stored.version;
      for (const step of PATH_FROM_SUBMITTED.get(state)!) {
        version = await repo.update(scope, stored.task.id, version, statusChange(step, clock.next()));
      }
      return { id: stored.task.id, version };
    }

    async function mustGet(scope: TaskScope, id: string, historyLength?: number): Promise<StoredTask> {
      const stored = await repo.get(scope, id, { historyLength });
      if (stored === undefined) throw new Error(`task ${id} not found`);
      return stored;
    }

    /** Walks every page and returns all tasks in the order served, plus every page's totalSize. */
    async function walk(scope: TaskScope, q: Partial<TaskQuery>, between?: (page: number) => Promise<void>) {
      const tasks: Task[] = [];
      const totals: number[] = [];
      let after: ListCursor | undefined;
      for (let page = 0; page < 10_000; page++) {
        const result = await repo.list(scope, query({ ...q, after }));
        tasks.push(...result.tasks);
        totals.push(result.totalSize);
        if (result.next === undefined) return { tasks, totals };
        const last = result.tasks[result.tasks.length - 1]!;
        expect(result.next).toEqual({ statusMicros: microsOf(last.status?.timestamp), taskId: last.id });
        expect(result.tasks).toHaveLength(q.pageSize ?? 100);
        after = result.next;
        await between?.(page);
      }
      throw new Error("pagination did not end");
    }

    describe("create", () => {
      it("R-TASK-1: stores a SUBMITTED task at version 1, exactly as given (timestamp nanos included)", async () => {
        const task = newTask({ micros: clock.next(), text: "hello" });
        task.status!.timestamp = create(TimestampSchema, { seconds: 1_750_000_123n, nanos: 456_789_123 });
        task.metadata = { origin: "test" };
        const stored = await repo.create(alice, task);
        expect(stored.version).toBe(1);
        expect(stored.task).toEqual(task);
        const read = await mustGet(alice, task.id);
        expect(read.version).toBe(1);
        expect(read.task).toEqual(task);
        expect(read.task.status?.timestamp?.nanos).toBe(456_789_123);
      });

      it.each([...EIGHT_STATES.filter((s) => s !== S.SUBMITTED), ...NOT_STATES].map((s) => [stateLabel(s), s]))(
        "R-TASK-1: refuses a new task in %s (InvalidChangeError) and stores nothing",
        async (_label, state) => {
          const task = newTask({ micros: clock.next() });
          task.status!.state = state as TaskState;
          await expect(repo.create(alice, task)).rejects.toBeInstanceOf(InvalidChangeError);
          expect(await repo.get(alice, task.id)).toBeUndefined();
        },
      );

      it("refuses a new task without a status or without an id (InvalidChangeError)", async () => {
        const noStatus = newTask({ micros: clock.next() });
        noStatus.status = undefined;
        await expect(repo.create(alice, noStatus)).rejects.toBeInstanceOf(InvalidChangeError);
        expect(await repo.get(alice, noStatus.id)).toBeUndefined();
        await expect(repo.create(alice, newTask({ id: "", micros: clock.next() }))).rejects.toBeInstanceOf(InvalidChangeError);
      });

      it("DuplicateTaskError when the id exists in the scope; the stored task is unchanged", async () => {
        const first = await createTask(alice, { text: "first" });
        const again = newTask({ id: first.task.id, micros: clock.next(), text: "second" });
        await expect(repo.create(alice, again)).rejects.toBeInstanceOf(DuplicateTaskError);
        expect(await mustGet(alice, first.task.id)).toEqual(first);
      });
    });

    describe("get", () => {
      it("R-GET-2: an unknown id is undefined", async () => {
        expect(await repo.get(alice, "no-such-task")).toBeUndefined();
      });

      it("A-22, R-SEC-3: a task is invisible to another principal and to the same principal under another tenant", async () => {
        const { task } = await createTask(alice);
        expect(await repo.get(bob, task.id)).toBeUndefined();
        expect(await repo.get(aliceElsewhere, task.id)).toBeUndefined();
        expect(await repo.get(scopeOf("tenant-1", ""), task.id)).toBeUndefined();
        await expect(repo.update(bob, task.id, 1, historyChange("x"))).rejects.toBeInstanceOf(TaskNotFoundError);
        await expect(repo.update(aliceElsewhere, task.id, 1, historyChange("x"))).rejects.toBeInstanceOf(TaskNotFoundError);
        expect((await mustGet(alice, task.id)).version).toBe(1);
      });

      it("R-HIST-1/2/3: historyLength undefined = all, 0 = none, N = the N most recent", async () => {
        const { task } = await createTask(alice, { text: "m0" });
        let version = 1;
        for (const text of ["m1", "m2", "m3", "m4"]) version = await repo.update(alice, task.id, version, historyChange(text));
        const texts = (t: Task) => t.history.map((m) => m.parts[0]!.content.value as string);
        expect(texts((await mustGet(alice, task.id)).task)).toEqual(["m0", "m1", "m2", "m3", "m4"]);
        expect(texts((await mustGet(alice, task.id, 0)).task)).toEqual([]);
        expect(texts((await mustGet(alice, task.id, 1)).task)).toEqual(["m4"]);
        expect(texts((await mustGet(alice, task.id, 3)).task)).toEqual(["m2", "m3", "m4"]);
        expect(texts((await mustGet(alice, task.id, 50)).task)).toEqual(["m0", "m1", "m2", "m3", "m4"]);
      });
    });

    describe("update", () => {
      const pairs = EIGHT_STATES.flatMap((from) => [...EIGHT_STATES, ...NOT_STATES].map((to) => [from, to] as const));
      it.each(pairs.map(([from, to]) => [stateLabel(from), stateLabel(to), from, to, isLegal(from, to)]))(
        "R-TASK-1/R-TASK-2: %s -> %s is applied if and only if legal",
        async (_f, _t, from, to, legal) => {
          const { id, version } = await taskIn(from as TaskState);
          const before = await mustGet(alice, id);
          const micros = clock.next();
          const change = statusChange(to as TaskState, micros, "progress");
          if (legal) {
            expect(await repo.update(alice, id, version, change)).toBe(version + 1);
            const after = await mustGet(alice, id);
            expect(after.version).toBe(version + 1);
            expect(after.task.status?.state).toBe(to);
            expect(microsOf(after.task.status?.timestamp)).toBe(micros);
          } else {
            await expect(repo.update(alice, id, version, change)).rejects.toBeInstanceOf(IllegalTransitionError);
            expect(await mustGet(alice, id)).toEqual(before);
          }
        },
      );

      it.each(TERMINAL.map((s) => [stateLabel(s), s]))("R-TASK-2: a %s task refuses every kind of change and stays as it was", async (_label, state) => {
        const { id, version } = await taskIn(state as TaskState);
        const before = await mustGet(alice, id);
        const changes: TaskChange[] = [
          ...[...EIGHT_STATES, ...NOT_STATES].map((to) => statusChange(to, clock.next())),
          artifactChange(textArtifact("a1", "x"), false),
          artifactChange(textArtifact("a1", "x"), true),
          historyChange("follow-up"),
        ];
        for (const change of changes) {
          await expect(repo.update(alice, id, version, change)).rejects.toBeInstanceOf(IllegalTransitionError);
        }
        expect(await mustGet(alice, id)).toEqual(before);
      });

      it("TaskNotFoundError for an unknown id", async () => {
        await expect(repo.update(alice, "no-such-task", 1, historyChange("x"))).rejects.toBeInstanceOf(TaskNotFoundError);
      });

      it("VersionConflictError on a stale or future expectedVersion, for every change kind; nothing applied", async () => {
        const { id, version } = await taskIn(S.WORKING);
        const before = await mustGet(alice, id);
        const changes: TaskChange[] = [statusChange(S.COMPLETED, clock.next()), artifactChange(textArtifact("a1", "x")), historyChange("late")];
        for (const change of changes) {
          for (const stale of [version - 1, version + 1, 0]) {
            const failure = repo.update(alice, id, stale, change);
            await expect(failure).rejects.toBeInstanceOf(VersionConflictError);
            await expect(failure).rejects.toMatchObject({ taskId: id, expected: stale, actual: version });
          }
        }
        expect(await mustGet(alice, id)).toEqual(before);
      });

      it("concurrent writers with the same expectedVersion: exactly one wins, the others get VersionConflictError", async () => {
        const { id, version } = await taskIn(S.WORKING);
        const writers = 12;
        const results = await Promise.allSettled(
          Array.from({ length: writers }, (_, i) =>
            i % 2 === 0
              ? repo.update(alice, id, version, historyChange(`writer-${i}`))
              : repo.update(alice, id, version, statusChange(S.WORKING, clock.next(), `writer-${i}`)),
          ),
        );
        const won = results.filter((r) => r.status === "fulfilled");
        expect(won).toHaveLength(1);
        expect((won[0] as PromiseFulfilledResult<number>).value).toBe(version + 1);
        for (const r of results) {
          if (r.status === "rejected") expect(r.reason).toBeInstanceOf(VersionConflictError);
        }
        const after = await mustGet(alice, id);
        expect(after.version).toBe(version + 1);
        expect(after.task.history.filter((m) => /^writer-/.test(m.parts[0]!.content.value as string))).toHaveLength(1);
      });

      it("each accepted write adds one to the version", async () => {
        const { task } = await createTask();
        expect(await repo.update(alice, task.id, 1, statusChange(S.WORKING, clock.next()))).toBe(2);
        expect(await repo.update(alice, task.id, 2, historyChange("more"))).toBe(3);
        expect(await repo.update(alice, task.id, 3, artifactChange(textArtifact("a", "x")))).toBe(4);
        expect((await mustGet(alice, task.id)).version).toBe(4);
      });

      it("a status message becomes the status message and is appended to history", async () => {
        const { task } = await createTask(alice, { text: "question" });
        await repo.update(alice, task.id, 1, statusChange(S.WORKING, clock.next(), "thinking"));
        await repo.update(alice, task.id, 2, statusChange(S.INPUT_REQUIRED, clock.next(), "which one?"));
        const { task: read } = await mustGet(alice, task.id);
        expect(read.status?.message?.parts[0]?.content.value).toBe("which one?");
        expect(read.status?.message?.role).toBe(Role.AGENT);
        expect(read.history.map((m) => m.parts[0]!.content.value)).toEqual(["question", "thinking", "which one?"]);
      });

      it("R-SEND-12: an interrupted task takes a follow-up message and artifacts, and resumes WORKING", async () => {
        const { id, version } = await taskIn(S.INPUT_REQUIRED, alice, { text: "q" });
        let v = await repo.update(alice, id, version, historyChange("answer"));
        v = await repo.update(alice, id, v, artifactChange(textArtifact("draft", "d1")));
        v = await repo.update(alice, id, v, statusChange(S.WORKING, clock.next()));
        v = await repo.update(alice, id, v, statusChange(S.COMPLETED, clock.next(), "done"));
        const { task } = await mustGet(alice, id);
        expect(task.status?.state).toBe(S.COMPLETED);
        expect(task.history.map((m) => m.parts[0]!.content.value)).toEqual(["q", "answer", "done"]);
        expect(artifactTexts(task.artifacts[0])).toEqual(["d1"]);
        expect(v).toBe(version + 4);
      });

      it("a history change appends the message and leaves the status alone", async () => {
        const { id, version } = await taskIn(S.WORKING);
        const before = await mustGet(alice, id);
        await repo.update(alice, id, version, historyChange("also this"));
        const after = await mustGet(alice, id);
        expect(after.task.status).toEqual(before.task.status);
        expect(after.task.history.at(-1)?.parts[0]?.content.value).toBe("also this");
      });

      describe("artifacts (R-ART-1..3, A-17)", () => {
        it("a new artifact id is added; a second id is added after it", async () => {
          const { id, version } = await taskIn(S.WORKING);
          let v = await repo.update(alice, id, version, artifactChange(textArtifact("a", "1")));
          v = await repo.update(alice, id, v, artifactChange(textArtifact("b", "2"), false));
          const { task } = await mustGet(alice, id);
          expect(task.artifacts.map((a) => a.artifactId)).toEqual(["a", "b"]);
          expect(artifactTexts(task.artifacts[1])).toEqual(["2"]);
        });

        it("R-ART-2: append=true extends the parts of the artifact with the same id", async () => {
          const { id, version } = await taskIn(S.WORKING);
          let v = await repo.update(alice, id, version, artifactChange(textArtifact("a", "1", "2")));
          v = await repo.update(alice, id, v, artifactChange(textArtifact("a", "3"), true));
          v = await repo.update(alice, id, v, artifactChange(textArtifact("a", "4"), true, true));
          const { task } = await mustGet(alice, id);
          expect(task.artifacts).toHaveLength(1);
          expect(artifactTexts(task.artifacts[0])).toEqual(["1", "2", "3", "4"]);
        });

        it("A-17: append=false on an existing id replaces that artifact", async () => {
          const { id, version } = await taskIn(S.WORKING);
          let v = await repo.update(alice, id, version, artifactChange(textArtifact("a", "old", "older")));
          v = await repo.update(alice, id, v, artifactChange(textArtifact("b", "keep")));
          const replacement = textArtifact("a", "new");
          replacement.name = "renamed";
          v = await repo.update(alice, id, v, artifactChange(replacement, false));
          const { task } = await mustGet(alice, id);
          expect(task.artifacts.map((a) => a.artifactId)).toEqual(["a", "b"]);
          expect(task.artifacts[0]).toEqual(replacement);
          expect(artifactTexts(task.artifacts[1])).toEqual(["keep"]);
        });

        it("A-17: append=true on an unknown id starts that artifact", async () => {
          const { id, version } = await taskIn(S.WORKING);
          await repo.update(alice, id, version, artifactChange(textArtifact("fresh", "first chunk"), true));
          const { task } = await mustGet(alice, id);
          expect(task.artifacts.map((a) => a.artifactId)).toEqual(["fresh"]);
          expect(artifactTexts(task.artifacts[0])).toEqual(["first chunk"]);
        });

        it("R-ART-1: a malformed artifact (no id, no parts, a part without content) is refused whole", async () => {
          const { id, version } = await taskIn(S.WORKING);
          const v = await repo.update(alice, id, version, artifactChange(textArtifact("a", "1")));
          const before = await mustGet(alice, id);
          const emptyPart = textArtifact("a", "2");
          emptyPart.parts.push(create(PartSchema, {}));
          const malformed = [textArtifact("", "x"), create(ArtifactSchema, { artifactId: "a" }), emptyPart];
          for (const artifact of malformed) {
            for (const append of [false, true]) {
              await expect(repo.update(alice, id, v, artifactChange(artifact, append))).rejects.toBeInstanceOf(InvalidChangeError);
            }
          }
          expect(await mustGet(alice, id)).toEqual(before);
        });

        it("A-13: an artifact-only update keeps the status timestamp", async () => {
          const { id, version } = await taskIn(S.WORKING);
          const before = await mustGet(alice, id);
          await repo.update(alice, id, version, artifactChange(textArtifact("a", "1")));
          expect((await mustGet(alice, id)).task.status).toEqual(before.task.status);
        });
      });
    });

    describe("list", () => {
      it("R-LIST-1, A-22: only the caller's own tasks, in this tenant", async () => {
        const mine = [(await createTask(alice)).task.id, (await createTask(alice)).task.id];
        await createTask(bob);
        await createTask(aliceElsewhere);
        const page = await repo.list(alice, query());
        expect(page.tasks.map((t) => t.id).sort()).toEqual([...mine].sort());
        expect(page.totalSize).toBe(2);
        expect((await repo.list(scopeOf("tenant-3", "alice"), query())).totalSize).toBe(0);
        expect(await repo.list(scopeOf("tenant-3", "alice"), query())).toEqual({ tasks: [], totalSize: 0, next: undefined });
      });

      it("R-LIST-6, A-13: newest status timestamp first, ties by task id descending, whatever the insertion order", async () => {
        const base = clock.next(1000);
        // Out-of-order timestamps and ties on purpose.
        const specs: Array<[string, number]> = [
          ["t-b", base + 5],
          ["t-a", base + 3],
          ["t-c", base + 5],
          ["t-d", base + 1],
          ["t-e", base + 3],
          ["t-f", base + 9],
          ["t-a2", base + 5],
        ];
        for (const [id, micros] of specs) await repo.create(alice, newTask({ id, micros }));
        const expected = specs
          .map(([id, micros]) => ({ id, micros }))
          .sort(listOrder)
          .map((t) => t.id);
        expect((await repo.list(alice, query())).tasks.map((t) => t.id)).toEqual(expected);
        expect((await walk(alice, { pageSize: 1 })).tasks.map((t) => t.id)).toEqual(expected);
        expect((await walk(alice, { pageSize: 2 })).tasks.map((t) => t.id)).toEqual(expected);
      });

      it("R-LIST-6: a status change moves a task to the front; an artifact or history change does not", async () => {
        const ids: string[] = [];
        for (let i = 0; i < 4; i++) ids.push((await createTask()).task.id);
        // Newest first: ids[3], ids[2], ids[1], ids[0].
        await repo.update(alice, ids[1]!, 1, artifactChange(textArtifact("a", "x")));
        await repo.update(alice, ids[2]!, 1, historyChange("hello"));
        expect((await repo.list(alice, query())).tasks.map((t) => t.id)).toEqual([ids[3], ids[2], ids[1], ids[0]]);
        await repo.update(alice, ids[0]!, 1, statusChange(S.WORKING, clock.next()));
        expect((await repo.list(alice, query())).tasks.map((t) => t.id)).toEqual([ids[0], ids[3], ids[2], ids[1]]);
      });

      it("R-LIST-6: a status change to an older timestamp moves the task back", async () => {
        const early = clock.next();
        const a = (await createTask()).task.id;
        const b = (await createTask()).task.id;
        await repo.update(alice, b, 1, statusChange(S.WORKING, early - 10));
        expect((await repo.list(alice, query())).tasks.map((t) => t.id)).toEqual([a, b]);
        expect((await walk(alice, { pageSize: 1 })).tasks.map((t) => t.id)).toEqual([a, b]);
      });

      it("A-13: a state change that keeps the status timestamp is seen by every filter", async () => {
        const { id, version } = await taskIn(S.WORKING);
        const same = microsOf((await mustGet(alice, id)).task.status?.timestamp);
        await repo.update(alice, id, version, statusChange(S.COMPLETED, same));
        expect(await repo.list(alice, query({ state: S.WORKING }))).toEqual({ tasks: [], totalSize: 0, next: undefined });
        expect((await repo.list(alice, query({ state: S.COMPLETED }))).tasks.map((t) => t.id)).toEqual([id]);
        expect(await repo.listActive()).toEqual([]);
        expect(await repo.purgeTerminalBefore(same + 1)).toBe(1);
        expect(await repo.list(alice, query())).toEqual({ tasks: [], totalSize: 0, next: undefined });
      });

      it("R-LIST-6: a task whose status timestamp returns to an earlier value is listed once, at that value", async () => {
        const other = (await createTask()).task.id;
        const { id, version } = await taskIn(S.WORKING);
        const first = microsOf((await mustGet(alice, id)).task.status?.timestamp);
        let v = await repo.update(alice, id, version, statusChange(S.INPUT_REQUIRED, clock.next()));
        v = await repo.update(alice, id, v, statusChange(S.WORKING, first));
        v = await repo.update(alice, id, v, statusChange(S.WORKING, first));
        for (const q of [{}, { state: S.WORKING }, { contextId: (await mustGet(alice, id)).task.contextId }]) {
          const page = await repo.list(alice, query(q));
          expect(page.tasks.map((t) => t.id)).toEqual("state" in q || "contextId" in q ? [id] : [id, other]);
          expect(page.totalSize).toBe(page.tasks.length);
        }
        expect((await walk(alice, { pageSize: 1 })).tasks.map((t) => t.id)).toEqual([id, other]);
        expect((await repo.listActive()).map((a) => a.task.task.id).sort()).toEqual([id, other].sort());
      });

      describe("filters, totals and pages over a mixed set", () => {
        interface Fact {
          id: string;
          contextId: string;
          state: TaskState;
          micros: number;
        }
        let facts: Fact[];
        // Two sizes of context on purpose: stores may keep small and large contexts differently.
        const contexts = ["ctx-x", "ctx-y", "ctx-z", "ctx-small"];

        beforeEach(async () => {
          // 120 tasks: three contexts, every state, timestamp ties, some out of order; plus other scopes' tasks.
          for (let i = 0; i < 120; i++) {
            const state = EIGHT_STATES[(i * 5) % EIGHT_STATES.length]!;
            await taskIn(state, alice, { id: `task-${(i * 37) % 120}`.padEnd(9, "_"), contextId: i % 17 === 0 ? "ctx-small" : contexts[i % 3], text: `q${i}` });
            if (i % 10 === 0) await taskIn(state, bob, { contextId: contexts[i % 3] });
            // A tie: the next task starts at this task's status timestamp; or a jump back in time.
            if (i % 7 === 0) clock = new Clock(clock.next() - 2);
            else if (i % 11 === 0) clock = new Clock(clock.next() - 500);
          }
          await taskIn(S.WORKING, aliceElsewhere, { contextId: "ctx-x" });
          const page = await repo.list(alice, query());
          expect(page.totalSize).toBe(120);
          facts = [];
          for (const t of (await walk(alice, { pageSize: 100 })).tasks) {
            facts.push({ id: t.id, contextId: t.contextId, state: t.status!.state, micros: microsOf(t.status?.timestamp) });
          }
          expect(facts).toHaveLength(120);
          // From here on, timestamps rise past everything stored, as the service assigns them.
          clock = new Clock(Math.max(...facts.map((t) => t.micros)) + 1000);
        });

        function expectedIds(f: { contextId?: string; state?: TaskState; statusMicrosAtLeast?: number }): string[] {
          return facts
            .filter((t) => f.contextId === undefined || t.contextId === f.contextId)
            .filter((t) => f.state === undefined || t.state === f.state)
            .filter((t) => f.statusMicrosAtLeast === undefined || t.micros >= f.statusMicrosAtLeast)
            .sort(listOrder)
            .map((t) => t.id);
        }

        it("R-LIST-2, R-LIST-4: every page size 1..100 walks all tasks exactly once, in order, with a stable totalSize", async () => {
          const all = expectedIds({});
          expect(new Set(all).size).toBe(120);
          for (let pageSize = 1; pageSize <= 100; pageSize++) {
            const { tasks, totals } = await walk(alice, { pageSize });
            expect(tasks.map((t) => t.id)).toEqual(all);
            expect(new Set(totals)).toEqual(new Set([120]));
          }
        });

        it("R-LIST-7, R-LIST-5: context, state and since filters alone and combined; totalSize counts the matches", async () => {
          const sorted = [...facts].sort(listOrder);
          const cutoffs = [undefined, sorted[0]!.micros, sorted[40]!.micros, sorted[119]!.micros, sorted[0]!.micros + 1];
          for (const contextId of [undefined, ...contexts, "ctx-none"]) {
            for (const state of [undefined, ...EIGHT_STATES]) {
              for (const statusMicrosAtLeast of cutoffs) {
                const filter = { contextId, state, statusMicrosAtLeast };
                const expected = expectedIds(filter);
                for (const pageSize of [1, 7, 100]) {
                  const { tasks, totals } = await walk(alice, { ...filter, pageSize });
                  expect({ filter, pageSize, ids: tasks.map((t) => t.id) }).toEqual({ filter, pageSize, ids: expected });
                  expect({ filter, totals: new Set(totals) }).toEqual({ filter, totals: new Set([expected.length]) });
                }
              }
            }
          }
        });

        it("R-LIST-7: statusMicrosAtLeast is inclusive", async () => {
          const target = [...facts].sort(listOrder)[10]!;
          const page = await repo.list(alice, query({ statusMicrosAtLeast: target.micros }));
          expect(page.tasks.map((t) => t.id)).toContain(target.id);
          const later = await repo.list(alice, query({ statusMicrosAtLeast: target.micros + 1 }));
          expect(later.tasks.map((t) => t.id)).not.toContain(target.id);
        });

        it("R-LIST-8: includeArtifacts false strips artifacts; true returns them", async () => {
          const working = facts.filter((t) => t.state === S.WORKING).slice(0, 3);
          for (const t of working) {
            const { version } = await mustGet(alice, t.id);
            await repo.update(alice, t.id, version, artifactChange(textArtifact("out", "result")));
          }
          const withArtifacts = await repo.list(alice, query({ state: S.WORKING, includeArtifacts: true }));
          expect(withArtifacts.tasks.filter((t) => t.artifacts.length === 1)).toHaveLength(3);
          const without = await repo.list(alice, query({ state: S.WORKING, includeArtifacts: false }));
          expect(without.tasks.every((t) => t.artifacts.length === 0)).toBe(true);
          expect(without.tasks.map((t) => t.id)).toEqual(withArtifacts.tasks.map((t) => t.id));
          // Stripping is on the copy only.
          expect((await mustGet(alice, working[0]!.id)).task.artifacts).toHaveLength(1);
        });

        it("R-LIST-9: historyLength applies per task", async () => {
          const counts = async (historyLength?: number) => (await repo.list(alice, query({ historyLength }))).tasks.map((t) => t.history.length);
          for (const t of facts.filter((f) => !TERMINAL.includes(f.state)).slice(0, 5)) {
            let { version } = await mustGet(alice, t.id);
            for (const text of ["a", "b"]) version = await repo.update(alice, t.id, version, historyChange(text));
          }
          const full = await counts(undefined);
          expect(Math.max(...full)).toBe(3);
          expect(await counts(0)).toEqual(full.map(() => 0));
          expect(await counts(1)).toEqual(full.map((n) => Math.min(n, 1)));
          const page = await repo.list(alice, query({ historyLength: 1 }));
          for (const t of page.tasks) {
            const { task } = await mustGet(alice, t.id);
            expect(t.history).toEqual(task.history.slice(-1));
          }
        });

        it("A-13: a cursor is a position, valid even if its task changed or never existed", async () => {
          const sorted = [...facts].sort(listOrder);
          const pivot = sorted[50]!;
          const cursor: ListCursor = { statusMicros: pivot.micros, taskId: pivot.id };
          const expected = sorted.slice(51).map((t) => t.id);
          // The pivot task moves to the front; the cursor still means "after that position".
          const { version } = await mustGet(alice, pivot.id);
          if (pivot.state === S.WORKING || pivot.state === S.SUBMITTED) {
            await repo.update(alice, pivot.id, version, statusChange(S.FAILED, clock.next()));
          }
          expect((await repo.list(alice, query({ after: cursor }))).tasks.map((t) => t.id)).toEqual(expected);
          const ghost: ListCursor = { statusMicros: pivot.micros, taskId: `${pivot.id}~` };
          const fromGhost = await repo.list(alice, query({ after: ghost }));
          expect(fromGhost.tasks.map((t) => t.id)).toEqual(
            sorted.filter((t) => listOrder(t, { micros: ghost.statusMicros, id: ghost.taskId }) > 0).map((t) => t.id),
          );
        });

        it("R-LIST-2, A-13: paging under concurrent writes sees every task whose status did not change exactly once, and none twice", async () => {
          // Guarantee: with status timestamps that only rise (as the service assigns them), a task whose
          // status timestamp is unchanged for the whole walk is returned exactly once; a task that gets a
          // newer status timestamp mid-walk moves ahead of the cursor and is returned at most once; tasks
          // created mid-walk are newer than the cursor and not returned. Every page continues the order.
          const moved = new Set<string>();
          const created = new Set<string>();
          const sorted = [...facts].sort(listOrder);
          const { tasks } = await walk(alice, { pageSize: 6 }, async (page) => {
            // Artifact/history changes do not move a task: it stays "unchanged" for this guarantee.
            const unseenAhead = sorted[page * 6 + 20];
            if (unseenAhead !== undefined && !TERMINAL.includes(unseenAhead.state) && !moved.has(unseenAhead.id)) {
              const { version } = await mustGet(alice, unseenAhead.id);
              await repo.update(alice, unseenAhead.id, version, artifactChange(textArtifact("mid", "walk")));
            }
            // Status changes on an unseen and on an already seen task: both move to the front.
            for (const t of [sorted[page * 6 + 9], sorted[page * 6]]) {
              if (t === undefined || TERMINAL.includes(t.state) || moved.has(t.id)) continue;
              const { version } = await mustGet(alice, t.id);
              await repo.update(alice, t.id, version, statusChange(S.CANCELED, clock.next()));
              moved.add(t.id);
            }
            created.add((await createTask(alice)).task.id);
          });
          const ids = tasks.map((t) => t.id);
          expect(new Set(ids).size).toBe(ids.length);
          for (const t of facts) if (!moved.has(t.id)) expect(ids.filter((id) => id === t.id)).toHaveLength(1);
          for (const id of created) expect(ids).not.toContain(id);
          expect(moved.size).toBeGreaterThan(5);
          // The served sequence is in list order by the timestamps the tasks had when served.
          const keys = tasks.map((t) => ({ id: t.id, micros: microsOf(t.status?.timestamp) }));
          for (let i = 1; i < keys.length; i++) expect(listOrder(keys[i - 1]!, keys[i]!)).toBeLessThan(0);
        });

        it("R-TASK-4: listActive and purge keep the indexes right: purged tasks vanish from every filter", async () => {
          const sorted = [...facts].sort(listOrder);
          const cutoff = sorted[60]!.micros;
          const doomed = facts.filter((t) => TERMINAL.includes(t.state) && t.micros < cutoff).map((t) => t.id);
          expect(doomed.length).toBeGreaterThan(5);
          const bobs = (await walk(bob, { pageSize: 100 })).tasks;
          const bobDoomed = bobs.filter((t) => TERMINAL.includes(t.status!.state) && microsOf(t.status?.timestamp) < cutoff);
          expect(await repo.purgeTerminalBefore(cutoff)).toBe(doomed.length + bobDoomed.length);
          expect((await repo.list(bob, query())).totalSize).toBe(bobs.length - bobDoomed.length);
          facts = facts.filter((t) => !doomed.includes(t.id));
          for (const id of doomed) expect(await repo.get(alice, id)).toBeUndefined();
          for (const contextId of [undefined, ...contexts]) {
            for (const state of [undefined, ...EIGHT_STATES]) {
              const { tasks, totals } = await walk(alice, { contextId, state, pageSize: 9 });
              expect(tasks.map((t) => t.id)).toEqual(expectedIds({ contextId, state }));
              expect(new Set(totals)).toEqual(new Set([expectedIds({ contextId, state }).length]));
            }
          }
        });
      });
    });

    describe("listActive", () => {
      it("returns the SUBMITTED and WORKING tasks of every scope, with scope and version", async () => {
        const expected = new Map<string, { scope: TaskScope; version: number }>();
        for (const scope of [alice, bob, aliceElsewhere]) {
          for (const state of EIGHT_STATES) {
            const { id, version } = await taskIn(state, scope);
            if (state === S.SUBMITTED || state === S.WORKING) expected.set(`${scope.tenant}/${scope.principal}/${id}`, { scope, version });
          }
        }
        const active = await repo.listActive();
        const got = new Map(active.map((a) => [`${a.scope.tenant}/${a.scope.principal}/${a.task.task.id}`, { scope: a.scope, version: a.task.version }]));
        expect(got).toEqual(expected);
        for (const a of active) expect(a.task).toEqual(await mustGet(a.scope, a.task.task.id));
      });
    });

    describe("purgeTerminalBefore", () => {
      it("R-TASK-4: removes only terminal tasks whose status timestamp is older than the cutoff", async () => {
        const old: string[] = [];
        const keptOld: string[] = [];
        for (const state of EIGHT_STATES) {
          const { id } = await taskIn(state, state === S.FAILED ? bob : alice);
          (TERMINAL.includes(state) ? old : keptOld).push(id);
        }
        const cutoff = clock.next();
        const atCutoff = newTask({ micros: cutoff - 1 });
        await repo.create(alice, atCutoff);
        await repo.update(alice, atCutoff.id, 1, statusChange(S.REJECTED, cutoff));
        const recent = await taskIn(S.COMPLETED);

        expect(await repo.purgeTerminalBefore(cutoff)).toBe(old.length);
        for (const id of old) {
          expect(await repo.get(alice, id)).toBeUndefined();
          expect(await repo.get(bob, id)).toBeUndefined();
          await expect(repo.update(alice, id, 3, historyChange("x"))).rejects.toBeInstanceOf(TaskNotFoundError);
        }
        for (const id of [...keptOld, atCutoff.id, recent.id]) expect(await repo.get(alice, id)).toBeDefined();
        const listed = (await walk(alice, { pageSize: 3 })).tasks.map((t) => t.id);
        expect(listed.sort()).toEqual([...keptOld, atCutoff.id, recent.id].sort());
        expect((await repo.list(alice, query({ state: S.COMPLETED }))).totalSize).toBe(1);
        expect(await repo.purgeTerminalBefore(cutoff)).toBe(0);
      });
    });

    describe("copies", () => {
      it("tasks handed out or handed in are copies: mutating them never changes storage", async () => {
        const input = newTask({ micros: clock.next(), text: "q" });
        const created = await repo.create(alice, input);
        input.history.push(message("sneaky"));
        input.status!.state = S.COMPLETED;
        created.task.history.length = 0;
        created.task.contextId = "changed";

        const change = statusChange(S.WORKING, clock.next(), "working");
        await repo.update(alice, input.id, 1, change);
        if (change.kind === "status") change.status.message!.parts[0]!.content = { case: "text", value: "rewritten" };
        const artifact = textArtifact("a", "1");
        await repo.update(alice, input.id, 2, artifactChange(artifact));
        artifact.parts.push(create(PartSchema, { content: { case: "text", value: "sneaky" } }));

        const before = await mustGet(alice, input.id);
        const expectedTask = clone(TaskSchema, before.task);
        expect(before.task.history.map((m) => m.parts[0]!.content.value)).toEqual(["q", "working"]);
        expect(artifactTexts(before.task.artifacts[0])).toEqual(["1"]);
        expect(before.task.contextId).toBe(input.contextId);

        before.task.status!.state = S.FAILED;
        before.task.history.push(message("mutated"));
        before.task.artifacts[0]!.parts.length = 0;
        const listed = (await repo.list(alice, query())).tasks[0]!;
        listed.history.length = 0;
        listed.artifacts.length = 0;
        for (const a of await repo.listActive()) a.task.task.history.length = 0;

        expect((await mustGet(alice, input.id)).task).toEqual(expectedTask);
      });

      it("settled tasks are copies too", async () => {
        const { id } = await taskIn(S.COMPLETED, alice, { text: "q" });
        const first = await mustGet(alice, id);
        const expectedTask = clone(TaskSchema, first.task);
        first.task.history.length = 0;
        first.task.status!.state = S.WORKING;
        expect((await mustGet(alice, id)).task).toEqual(expectedTask);
      });
    });
  });
}

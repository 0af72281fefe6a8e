import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { EventLogRead, LoggedEvent, TaskEventLog } from "../../src/lifecycle/ports/event-log.js";
import type { TaskRepository } from "../../src/lifecycle/ports/task-repository.js";
import { Clock, artifactChange, artifactTexts, historyChange, newTask, scopeOf, statusChange, textArtifact } from "../support/tasks.js";

/**
 * The behaviour every TaskEventLog (the resume log of ruling A-33) must show, whatever store
 * keeps it. `open(retentionMs)` gives a repository with its log; `reopen` (durable stores) a new
 * repository on the same data, as a restarted process or another replica would open it.
 */
export interface EventLogStore {
  readonly repo: TaskRepository;
  reopen?(): Promise<TaskRepository>;
  cleanup(): Promise<void>;
}
export type EventLogStoreFactory = (retentionMs: number) => Promise<EventLogStore>;

const S = TaskState;
const alice = scopeOf("tenant-1", "alice");
const bob = scopeOf("tenant-1", "bob");

function logOf(repo: TaskRepository): TaskEventLog {
  if (repo.eventLog === undefined) throw new Error("the repository has no event log");
  return repo.eventLog;
}

function describeEvent(event: LoggedEvent): string {
  switch (event.kind) {
    case "status":
      return `${event.version} status ${event.status.state}`;
    case "artifact":
      return `${event.version} artifact ${artifactTexts(event.artifact).join(",")}${event.append ? " +" : ""}${event.lastChunk ? " last" : ""}`;
    case "history":
      return `${event.version} history`;
  }
}

function described(read: EventLogRead): unknown {
  return read.kind === "events" ? { state: read.state, events: read.events.map(describeEvent) } : read.kind;
}

/** A task written through five changes of every kind: versions 2..6, ending INPUT_REQUIRED. */
async function writeTask(repo: TaskRepository, clock: Clock): Promise<string> {
  const { task } = await repo.create(alice, newTask({ micros: clock.next(), text: "go" }));
  let v = 1;
  v = await repo.update(alice, task.id, v, statusChange(S.WORKING, clock.next()));
  v = await repo.update(alice, task.id, v, artifactChange(textArtifact("out", "a")));
  v = await repo.update(alice, task.id, v, artifactChange(textArtifact("out", "b"), true, true));
  v = await repo.update(alice, task.id, v, historyChange("more"));
  await repo.update(alice, task.id, v, statusChange(S.INPUT_REQUIRED, clock.next(), "which?"));
  return task.id;
}

const ALL_AFTER_1 = ["2 status 2", "3 artifact a", "4 artifact b + last", "5 history", "6 status 6"];

export function describeEventLogContract(name: string, open: EventLogStoreFactory): void {
  describe(`${name}: resume event log (A-33)`, () => {
    let store: EventLogStore;
    const clock = new Clock();
    beforeAll(async () => {
      store = await open(60_000);
    });
    afterAll(() => store.cleanup());

    test("A-33: exactly the events after a cursor, in version order with no gap, ending at the task's state; none after the last", async () => {
      const id = await writeTask(store.repo, clock);
      const log = logOf(store.repo);
      expect(described(await log.readAfter(alice, id, 1))).toEqual({ state: S.INPUT_REQUIRED, events: ALL_AFTER_1 });
      expect(described(await log.readAfter(alice, id, 4))).toEqual({ state: S.INPUT_REQUIRED, events: ALL_AFTER_1.slice(3) });
      expect(described(await log.readAfter(alice, id, 6))).toEqual({ state: S.INPUT_REQUIRED, events: [] });
      const statusEvent = (await log.readAfter(alice, id, 5)) as Extract<EventLogRead, { kind: "events" }>;
      const last = statusEvent.events[0]!;
      expect(last.kind === "status" && last.status.message?.parts[0]?.content).toEqual({ case: "text", value: "which?" });
      expect(last.taskId).toBe(id);
    });

    test("A-33: a cursor ahead of the task, or before its first event, is expired; another scope's task or an unknown one is not-found", async () => {
      const id = await writeTask(store.repo, clock);
      const log = logOf(store.repo);
      expect(described(await log.readAfter(alice, id, 7))).toBe("expired");
      expect(described(await log.readAfter(alice, id, 0))).toBe("expired");
      expect(described(await log.readAfter(bob, id, 1))).toBe("not-found");
      expect(described(await log.readAfter(scopeOf("tenant-2", "alice"), id, 1))).toBe("not-found");
      expect(described(await log.readAfter(alice, "no-such-task", 1))).toBe("not-found");
    });

    test("A-33: a purged task's cursor is not-found", async () => {
      const { task } = await store.repo.create(alice, newTask({ micros: clock.next() }));
      await store.repo.update(alice, task.id, 1, statusChange(S.COMPLETED, clock.next()));
      expect(described(await logOf(store.repo).readAfter(alice, task.id, 1))).toEqual({ state: S.COMPLETED, events: ["2 status 3"] });
      await store.repo.purgeTerminalBefore(clock.next());
      expect(described(await logOf(store.repo).readAfter(alice, task.id, 1))).toBe("not-found");
    });

    test("A-33: what one process logged, a new one on the same store (a restart, another replica) reads the same", async () => {
      if (store.reopen === undefined) return; // memory: nothing outlives the process (the log goes with the store)
      const id = await writeTask(store.repo, clock);
      const other = await store.reopen();
      expect(described(await logOf(other).readAfter(alice, id, 2))).toEqual({ state: S.INPUT_REQUIRED, events: ALL_AFTER_1.slice(1) });
      // Written by the new one, read by the new one: the versions go on.
      await other.update(alice, id, 6, historyChange("an answer"));
      expect(described(await logOf(other).readAfter(alice, id, 5))).toEqual({ state: S.INPUT_REQUIRED, events: ["6 status 6", "7 history"] });
    });
  });

  describe(`${name}: resume event log retention (A-33)`, () => {
    let store: EventLogStore;
    const clock = new Clock();
    beforeAll(async () => {
      store = await open(300);
    });
    afterAll(() => store.cleanup());

    test("A-33: a cursor whose next event is older than the retention window is expired; a later cursor still reads", async () => {
      const { task } = await store.repo.create(alice, newTask({ micros: clock.next() }));
      let v = await store.repo.update(alice, task.id, 1, statusChange(S.WORKING, clock.next()));
      await new Promise((resolve) => setTimeout(resolve, 450));
      v = await store.repo.update(alice, task.id, v, artifactChange(textArtifact("o", "late")));
      await store.repo.update(alice, task.id, v, statusChange(S.COMPLETED, clock.next()));
      const log = logOf(store.repo);
      expect(log.retentionMs).toBe(300);
      expect(described(await log.readAfter(alice, task.id, 1))).toBe("expired");
      expect(described(await log.readAfter(alice, task.id, 2))).toEqual({ state: S.COMPLETED, events: ["3 artifact late", "4 status 3"] });
    });
  });
}

import { describe, expect, it } from "@jest/globals";
import { TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { ByteSlabs } from "../../../src/storage/memory/byte-slabs.js";
import { StatusIndex } from "../../../src/storage/memory/status-index.js";
import { TaskColumns } from "../../../src/storage/memory/task-columns.js";

function columns() {
  const tasks = new TaskColumns(new ByteSlabs(), 4); // tiny: growth is exercised too
  const put = (id: string, micros: number, state = TaskState.COMPLETED) => {
    const slot = tasks.allocate(id);
    tasks.micros[slot] = micros;
    tasks.state[slot] = state;
    return slot;
  };
  const ids = (slots: Iterable<number>) => [...slots].map((s) => tasks.idOf(s));
  return { tasks, put, ids };
}

describe("StatusIndex over task slots", () => {
  it("an index that refills (SUBMITTED, WORKING) keeps its array when it empties; a small one that does not gives it back", () => {
    const { tasks, put } = columns();
    const refilling = new StatusIndex(tasks, TaskState.WORKING, true);
    const settled = new StatusIndex(tasks, TaskState.COMPLETED);
    const slots = [put("w1", 1, TaskState.WORKING), put("w2", 2, TaskState.WORKING)];
    for (const slot of slots) refilling.add(slot);
    const done = put("c1", 3);
    settled.add(done);
    const reserved = refilling.reserved;
    expect(reserved).toBeGreaterThan(0);
    for (const slot of slots) {
      tasks.state[slot] = TaskState.COMPLETED; // the task moved on: its entry is stale
      refilling.drop();
    }
    tasks.state[done] = TaskState.CANCELED;
    settled.drop();
    expect(refilling.entries).toBe(0);
    expect(refilling.reserved).toBe(reserved);
    expect(settled.reserved).toBe(0);
  });

  it("R-LIST-6, A-13: newest first; ties on micros by id descending in JS string (UTF-16) order, whatever the insertion order", () => {
    const { tasks, put, ids } = columns();
    const index = new StatusIndex(tasks);
    // "\uffff" sorts after the emoji's surrogate pair in UTF-16 order (not in code point order).
    const tied = ["b", "a", "\uffff", "😀", "é", "z", "B"];
    for (const id of tied) index.add(put(id, 100));
    index.add(put("old", 50));
    index.add(put("new", 200));
    const expectedTies = [...tied].sort((x, y) => (x < y ? 1 : x > y ? -1 : 0));
    expect(ids(index.walk())).toEqual(["new", ...expectedTies, "old"]);
    expect(expectedTies[0]).toBe("\uffff");
  });

  it("R-LIST-2: a cursor (micros, id) resumes strictly after itself, even on a tie or an id never stored", () => {
    const { tasks, put, ids } = columns();
    const index = new StatusIndex(tasks);
    for (const id of ["a", "c", "e"]) index.add(put(id, 100));
    index.add(put("x", 90));
    expect(ids(index.walk({ statusMicros: 100, taskId: "c" }))).toEqual(["a", "x"]);
    expect(ids(index.walk({ statusMicros: 100, taskId: "d" }))).toEqual(["c", "a", "x"]);
    expect(ids(index.walk(undefined, 100))).toEqual(["e", "c", "a"]);
  });

  it("entries of tasks that moved, changed state or were released are skipped and compacted away", () => {
    const { tasks, put, ids } = columns();
    const index = new StatusIndex(tasks, TaskState.COMPLETED);
    const slots = Array.from({ length: 200 }, (_, i) => put(`t${String(i).padStart(3, "0")}`, 1000 + i));
    slots.forEach((s) => index.add(s));
    tasks.micros[slots[0]!] = 5000; // moved to the front
    index.drop();
    index.add(slots[0]!);
    tasks.state[slots[1]!] = TaskState.FAILED; // left this state
    index.drop();
    tasks.release(slots[2]!); // gone
    index.drop();
    const walked = ids(index.walk());
    expect(walked[0]).toBe("t000");
    expect(walked).toHaveLength(198);
    expect(walked).not.toContain("t001");
    expect(walked).not.toContain("t002");
    expect(index.live).toBe(198);
    index.compact();
    expect(index.entries).toBe(198);
  });

  it("a task that returns to an earlier timestamp is listed once", () => {
    const { tasks, put, ids } = columns();
    const index = new StatusIndex(tasks);
    const s = put("t", 10);
    index.add(s);
    for (const micros of [20, 10]) {
      tasks.micros[s] = micros;
      index.drop();
      index.add(s);
    }
    expect(ids(index.walk())).toEqual(["t"]);
  });
});

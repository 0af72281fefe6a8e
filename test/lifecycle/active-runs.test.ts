import { ActiveRuns, type ActiveRunLinks } from "../../src/lifecycle/runs/active-runs.js";

/* The service's list of agent runs in flight: the runs themselves are its links. */

interface Run extends ActiveRunLinks {
  readonly name: string;
}
const run = (name: string): Run => ({ name, activePrev: undefined, activeNext: undefined, done: undefined });
const names = (list: ActiveRuns<Run>) => list.runs().map((r) => r.name);

describe("ActiveRuns", () => {
  it("keeps every run added until it is deleted, from the head, the middle or the tail, with its done promise", async () => {
    const list = new ActiveRuns<Run>();
    const [a, b, c, d] = ["a", "b", "c", "d"].map(run) as [Run, Run, Run, Run];
    const done = Promise.resolve();
    for (const r of [a, b, c, d]) list.add(r, done);
    expect(names(list)).toEqual(["d", "c", "b", "a"]);
    expect(list.size).toBe(4);
    expect(b.done).toBe(done);
    list.delete(b); // middle
    expect(names(list)).toEqual(["d", "c", "a"]);
    list.delete(d); // head
    expect(names(list)).toEqual(["c", "a"]);
    list.delete(a); // tail
    expect(names(list)).toEqual(["c"]);
    expect(list.size).toBe(1);
    expect(b.done).toBeUndefined();
    list.delete(c);
    expect(names(list)).toEqual([]);
    expect(list.size).toBe(0);
  });

  it("deleting a run that is not in the list (never added, or deleted already) changes nothing", () => {
    const list = new ActiveRuns<Run>();
    const [a, b] = [run("a"), run("b")];
    list.add(a, Promise.resolve());
    list.delete(b);
    list.delete(a);
    list.delete(a);
    expect(list.size).toBe(0);
    list.add(b, Promise.resolve());
    expect(names(list)).toEqual(["b"]);
  });

  it("runs() is a snapshot: deleting while going through it visits every run once", () => {
    const list = new ActiveRuns<Run>();
    const all = ["a", "b", "c"].map(run);
    for (const r of all) list.add(r, Promise.resolve());
    const seen: string[] = [];
    for (const r of list.runs()) {
      seen.push(r.name);
      list.delete(r);
    }
    expect(seen.sort()).toEqual(["a", "b", "c"]);
    expect(list.size).toBe(0);
  });
});

import { describe, expect, it } from "@jest/globals";
import { setImmediate as turn } from "node:timers/promises";
import { EventHub, LISTENERS_PER_TURN } from "../../src/events/event-hub.js";
import type { TaskEvent } from "../../src/events/task-event.js";

const event = (version: number, taskId = "t"): TaskEvent => ({ kind: "history", version, taskId, contextId: "c", message: undefined as never });

/** Gives the hub event-loop turns to deliver its slices. */
async function turns(count = 20): Promise<void> {
  for (let i = 0; i < count; i++) await turn();
}

describe("EventHub: fan-out, in slices for many listeners", () => {
  it("R-STREAM: a task with few listeners gets each event before publish() returns", () => {
    const hub = new EventHub();
    const seen: number[] = [];
    hub.subscribe("t", (e) => seen.push(e.version));
    hub.subscribe("other", () => seen.push(-1));
    hub.publish(event(1));
    hub.publish(event(2));
    expect(seen).toEqual([1, 2]);
  });

  it("hasListeners tells whether an event would reach anyone; a listener added after skipped events gets the next one", () => {
    const hub = new EventHub();
    expect(hub.hasListeners("t")).toBe(false);
    // A publisher that skips events no one hears (the task writer does) leaves nothing behind.
    const seen: number[] = [];
    const stop = hub.subscribe("t", (e) => seen.push(e.version));
    expect(hub.hasListeners("t")).toBe(true);
    expect(hub.hasListeners("other")).toBe(false);
    hub.publish(event(3));
    stop();
    expect(hub.hasListeners("t")).toBe(false);
    hub.subscribe("t", (e) => seen.push(-e.version));
    hub.publish(event(4));
    expect(seen).toEqual([3, -4]);
  });

  it("R-SUB-4: with more listeners than a slice, every listener gets every event once, in order, a slice per turn", async () => {
    const hub = new EventHub();
    const n = LISTENERS_PER_TURN * 3 + 7;
    const seen = Array.from({ length: n }, () => [] as number[]);
    for (const list of seen) hub.subscribe("t", (e) => list.push(e.version));
    for (let v = 1; v <= 5; v++) hub.publish(event(v));
    // The first slice has event 1 when publish() returns; the later events wait behind it.
    expect(seen.slice(0, LISTENERS_PER_TURN).every((s) => s.join() === "1")).toBe(true);
    expect(seen.slice(LISTENERS_PER_TURN).every((s) => s.length === 0)).toBe(true);
    await turn();
    expect(seen.filter((s) => s.length > 0)).toHaveLength(2 * LISTENERS_PER_TURN);
    await turns();
    for (const s of seen) expect(s).toEqual([1, 2, 3, 4, 5]);
  });

  it("R-SUB-5: a listener removed while events wait for it gets none of them; one added gets only later events", async () => {
    const hub = new EventHub();
    const seen = Array.from({ length: LISTENERS_PER_TURN * 2 }, () => [] as number[]);
    const unsubscribe = seen.map((list) => hub.subscribe("t", (e) => list.push(e.version)));
    hub.publish(event(1));
    const lastOne = seen.length - 1;
    unsubscribe[lastOne]!(); // still waiting for event 1
    const late: number[] = [];
    hub.subscribe("t", (e) => late.push(e.version));
    hub.publish(event(2));
    await turns();
    expect(seen[lastOne]).toEqual([]);
    expect(seen[0]).toEqual([1, 2]);
    expect(seen[lastOne - 1]).toEqual([1, 2]);
    expect(late).toEqual([2]);
    expect(hub.listenerCount("t")).toBe(seen.length);
  });

  it("R-SUB-1: a listener added while events are queued gets exactly those published after it subscribed", async () => {
    const hub = new EventHub();
    for (let i = 0; i < LISTENERS_PER_TURN + 1; i++) hub.subscribe("t", () => undefined);
    hub.publish(event(1));
    hub.publish(event(2)); // queued behind 1
    const late: number[] = [];
    hub.subscribe("t", (e) => late.push(e.version));
    hub.publish(event(3));
    await turns();
    expect(late).toEqual([3]);
  });

  it("R-STREAM: a burst far larger than a slice reaches every listener whole and in order", async () => {
    const hub = new EventHub();
    const listeners = LISTENERS_PER_TURN + 72;
    const events = 3000;
    const seen = Array.from({ length: listeners }, () => ({ count: 0, ordered: true }));
    for (const s of seen)
      hub.subscribe("t", (e) => {
        s.ordered &&= e.version === s.count + 1;
        s.count++;
      });
    for (let v = 1; v <= events; v++) hub.publish(event(v));
    for (let i = 0; i < 100_000 && seen.some((s) => s.count < events); i++) await turn();
    expect(seen.every((s) => s.count === events && s.ordered)).toBe(true);
  });

  it("R-SUB-5: a listener that throws is removed, reported once, and the others still get every event", async () => {
    const errors: unknown[] = [];
    const hub = new EventHub((error) => errors.push(error));
    const counts = Array.from({ length: LISTENERS_PER_TURN + 50 }, () => 0);
    counts.forEach((_, i) =>
      hub.subscribe("t", () => {
        if (i === LISTENERS_PER_TURN + 10) throw new Error("broken listener");
        counts[i]!++;
      }),
    );
    hub.publish(event(1));
    hub.publish(event(2));
    await turns();
    expect(errors).toHaveLength(1);
    expect(counts.filter((c) => c === 2)).toHaveLength(counts.length - 1);
    expect(hub.listenerCount()).toBe(counts.length - 1);
  });

  it("R-SUB-4: one task's backlog does not hold back another task's events", async () => {
    const hub = new EventHub();
    for (let i = 0; i < LISTENERS_PER_TURN * 2; i++) hub.subscribe("busy", () => undefined);
    const quiet: number[] = [];
    hub.subscribe("quiet", (e) => quiet.push(e.version));
    hub.publish(event(1, "busy"));
    hub.publish(event(1, "quiet"));
    expect(quiet).toEqual([1]);
    await turns();
  });
});

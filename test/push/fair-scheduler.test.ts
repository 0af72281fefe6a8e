/**
 * Issue 33 finding 4: the order in which waiting webhook lanes get a request slot, decided by the
 * scheduler alone (no connection): round robin across principals, then across their hosts,
 * under the per-host and per-principal caps.
 */
import { FairScheduler, destinationHost, principalShare } from "../../src/push/fair-scheduler.js";

interface Item {
  readonly name: string;
  readonly principal: string;
  host: string | undefined;
}
const item = (name: string, principal: string, host?: string): Item => ({ name, principal, host });

test("round robin across principals: a principal with many waiting lanes does not pass one that came later", () => {
  const s = new FairScheduler<Item>({ perHost: 100, perPrincipal: 100 });
  for (let i = 0; i < 5; i++) s.push(item(`a${i}`, "A", "a.example"));
  s.push(item("b0", "B", "b.example"));
  const order = [s.take(), s.take(), s.take()].map((x) => x?.name);
  expect(order).toEqual(["a0", "b0", "a1"]);
  expect(s.size).toBe(3);
});

test("round robin across one principal's hosts; a host at its cap is passed over until a request to it ends", () => {
  const s = new FairScheduler<Item>({ perHost: 1, perPrincipal: 100 });
  s.push(item("slow1", "A", "slow.example"));
  s.push(item("slow2", "A", "slow.example"));
  s.push(item("fast1", "A", "fast.example"));
  const first = s.take()!;
  expect(s.acquireHost(first.host!)).toBe(true);
  const second = s.take()!;
  expect([first.name, second.name]).toEqual(["slow1", "fast1"]);
  expect(s.acquireHost("fast.example")).toBe(true);
  expect(s.take()).toBeUndefined(); // slow2 waits: its host is at its cap
  s.releaseHost("slow.example");
  expect(s.take()?.name).toBe("slow2");
});

test("a principal holds at most its share of the slots; the rest stay for the others", () => {
  const s = new FairScheduler<Item>({ perHost: 100, perPrincipal: principalShare(4) });
  for (let i = 0; i < 10; i++) s.push(item(`a${i}`, "A"));
  const taken = [s.take(), s.take(), s.take(), s.take()].filter((x) => x !== undefined);
  expect(taken.map((x) => x.name)).toEqual(["a0", "a1", "a2"]);
  s.push(item("b0", "B"));
  expect(s.take()?.name).toBe("b0");
  s.finished(taken[0]!);
  expect(s.take()?.name).toBe("a3");
});

test("shares and hosts", () => {
  expect([1, 2, 4, 32].map(principalShare)).toEqual([1, 1, 3, 24]);
  expect(destinationHost("https://Hooks.Example:8443/x")).toBe("hooks.example");
  expect(destinationHost("http://[::1]:9/x")).toBe("[::1]");
});

import { describe, expect, it } from "@jest/globals";
import { ByteSlabs } from "../../../src/storage/memory/byte-slabs.js";
import { hashKey, KeyTable } from "../../../src/storage/memory/key-table.js";

/** A KeyTable over keys stored the way the repository stores them (strings in ByteSlabs), value = index in `addresses`. */
function table(hash: (key: string) => number = hashKey) {
  const slabs = new ByteSlabs();
  const addresses: number[] = [];
  const t = new KeyTable((v, key) => slabs.stringEquals(addresses[v]!, key));
  return {
    t,
    add(key: string): number {
      const v = addresses.push(slabs.appendString(key)) - 1;
      t.add(hash(key), v);
      return v;
    },
    get: (key: string) => t.get(key, hash(key)),
    delete: (key: string, v: number) => t.delete(hash(key), v),
  };
}

describe("KeyTable: id -> slot with nothing on the V8 heap per key", () => {
  it("finds what was added, and -1 for what was not", () => {
    const { add, get } = table();
    const keys = Array.from({ length: 100 }, (_, i) => `task-${i}`);
    const values = keys.map(add);
    keys.forEach((k, i) => expect(get(k)).toBe(values[i]));
    expect(get("task-100")).toBe(-1);
    expect(get("")).toBe(-1);
  });

  it("keys whose hashes collide completely are told apart by their bytes", () => {
    const { t, add, get, delete: del } = table(() => 7); // every key lands in the same probe run
    const keys = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"];
    const values = keys.map(add);
    keys.forEach((k, i) => expect(get(k)).toBe(values[i]));
    expect(get("z")).toBe(-1);
    // Deleting from the middle of the run must leave every later key reachable (backward shift).
    expect(del("c", values[2]!)).toBe(true);
    expect(del("a", values[0]!)).toBe(true);
    expect(get("c")).toBe(-1);
    expect(get("a")).toBe(-1);
    keys.forEach((k, i) => i !== 0 && i !== 2 && expect(get(k)).toBe(values[i]));
    expect(t.size).toBe(keys.length - 2);
    expect(del("c", values[2]!)).toBe(false);
  });

  it("probe runs that wrap around the end of the table survive deletes", () => {
    // Homes 14 and 15 of 16 cells for all keys: runs wrap to cells 0, 1, ...
    const home = (key: string) => (key.charCodeAt(0) % 2 === 0 ? 14 : 15);
    const { t, add, get, delete: del } = table(home);
    const keys = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    const values = keys.map(add);
    expect(t.cells).toBe(16);
    for (let i = 0; i < keys.length; i += 2) {
      expect(del(keys[i]!, values[i]!)).toBe(true);
      keys.forEach((k, j) => expect(get(k)).toBe(j <= i && j % 2 === 0 ? -1 : values[j]));
    }
  });

  it("grows past its load limit and shrinks after deletes, keeping every key", () => {
    const { t, add, get, delete: del } = table();
    expect(t.cells).toBe(0); // nothing allocated until the first key
    const keys = Array.from({ length: 5000 }, (_, i) => `k${i}`);
    const values = keys.map(add);
    expect(t.cells).toBeGreaterThanOrEqual(5000 / 0.625);
    const grown = t.cells;
    keys.forEach((k, i) => i % 10 !== 0 && del(k, values[i]!));
    expect(t.size).toBe(500);
    expect(t.cells).toBeLessThan(grown);
    keys.forEach((k, i) => expect(get(k)).toBe(i % 10 === 0 ? values[i] : -1));
    keys.forEach((k, i) => i % 10 === 0 && del(k, values[i]!));
    expect([t.size, t.cells]).toEqual([0, 0]);
    expect(get("k0")).toBe(-1);
    add("again");
    expect(get("again")).toBe(5000);
  });

  it("non-ASCII ids, and ids differing only in a lone surrogate, are distinct keys", () => {
    const { add, get } = table();
    const keys = ["café", "cafe", "caf\u00e9\u00e9", "日本語", "😀", "\ud83d", "\ude00", "\ud83d\ude00x", "a\u0000b", "a"];
    const values = keys.map(add);
    keys.forEach((k, i) => expect(get(k)).toBe(values[i]));
    expect(get("\ufffd")).toBe(-1); // what UTF-8 would have turned a lone surrogate into
    expect(get("日本")).toBe(-1);
  });
});

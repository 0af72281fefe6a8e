import { newId } from "../../src/lifecycle/model/ids.js";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The Unix milliseconds an id carries in its first 48 bits. */
const millisOf = (id: string) => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

describe("server-made ids", () => {
  it("R-SEND-13: every id is a version-7 UUID in lower-case 8-4-4-4-12 form, across random-batch refills", () => {
    // 1,000 ids span several batches of random bytes (256 ids each).
    for (let i = 0; i < 1000; i++) expect(newId()).toMatch(UUID_V7);
  });

  it("R-SEND-13: ids do not repeat, and each is a string of its own (later ids do not change earlier ones)", () => {
    const ids = Array.from({ length: 20_000 }, () => newId());
    const first = ids[0];
    newId();
    expect(ids[0]).toBe(first);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("ids grow in the order they are made, even many within one millisecond, so a store's id index appends", () => {
    const ids = Array.from({ length: 20_000 }, () => newId());
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
  });

  it("carries the time it was made, to the millisecond (ahead only by what a burst borrowed)", () => {
    const before = Date.now();
    const id = newId();
    const after = Date.now();
    expect(millisOf(id)).toBeGreaterThanOrEqual(before);
    expect(millisOf(id)).toBeLessThanOrEqual(after + 20);
  });

  it("uses every hex digit in every position that is random", () => {
    const seen = Array.from({ length: 36 }, () => new Set<string>());
    for (let i = 0; i < 5000; i++) [...newId()].slice(19).forEach((c, at) => seen[19 + at]!.add(c));
    const fixed = new Map([
      [19, 4],
      [23, 1],
    ]); // variant digit 8..b; dash
    for (let at = 19; at < 36; at++) expect(seen[at]!.size).toBe(fixed.get(at) ?? 16);
  });
});

import { newId } from "../../src/lifecycle/ids.js";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("server-made ids", () => {
  it("R-SEND-13: every id is a version-4 UUID in lower-case 8-4-4-4-12 form, across random-batch refills", () => {
    // 1,000 ids span several batches of random bytes (256 ids each).
    for (let i = 0; i < 1000; i++) expect(newId()).toMatch(UUID_V4);
  });

  it("R-SEND-13: ids do not repeat, and each is a string of its own (later ids do not change earlier ones)", () => {
    const ids = Array.from({ length: 20_000 }, () => newId());
    const first = ids[0];
    newId();
    expect(ids[0]).toBe(first);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("uses every hex digit in every position that is random", () => {
    const seen = Array.from({ length: 36 }, () => new Set<string>());
    for (let i = 0; i < 5000; i++) [...newId()].forEach((c, at) => seen[at]!.add(c));
    const fixed = new Map([[8, 1], [13, 1], [14, 1], [18, 1], [19, 4], [23, 1]]);
    seen.forEach((digits, at) => expect(digits.size).toBe(fixed.get(at) ?? 16));
  });
});

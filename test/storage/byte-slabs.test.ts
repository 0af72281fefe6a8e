import { describe, expect, it } from "@jest/globals";
import { ByteSlabs, SLAB_BYTES } from "../../src/storage/memory/byte-slabs.js";

const bytes = (length: number, fill: number) => new Uint8Array(length).fill(fill);

describe("ByteSlabs: settled tasks' bytes off the V8 heap", () => {
  it("gives back each entry's header and bytes, as a copy that does not alias the slab", () => {
    const slabs = new ByteSlabs();
    const a = slabs.append(1, bytes(10, 7));
    const b = slabs.append(0, new Uint8Array([1, 2, 3]));
    const empty = slabs.append(1, new Uint8Array(0));
    expect([slabs.header(a), slabs.header(b), slabs.header(empty)]).toEqual([1, 0, 1]);
    expect([...slabs.copy(b)]).toEqual([1, 2, 3]);
    expect(slabs.copy(empty).byteLength).toBe(0);
    const copy = slabs.copy(a);
    copy.fill(0);
    expect([...slabs.copy(a)]).toEqual([...bytes(10, 7)]);
  });

  it("packs entries back to back and opens a new slab when one is full", () => {
    const slabs = new ByteSlabs();
    const size = 64 * 1024;
    const addresses = Array.from({ length: 40 }, (_, i) => slabs.append(0, bytes(size, i)));
    expect(slabs.footprint.slabs).toBe(3); // 15 entries of 64 KiB + 5 bytes fit in 1 MiB
    addresses.forEach((address, i) => expect(slabs.copy(address)[size - 1]).toBe(i));
  });

  it("frees a slab once all of its entries are released, but never the one being filled", () => {
    const slabs = new ByteSlabs();
    const first = Array.from({ length: 15 }, () => slabs.append(0, bytes(64 * 1024, 1)));
    const second = slabs.append(0, bytes(64 * 1024, 2)); // opens slab 2
    expect(slabs.footprint.slabs).toBe(2);
    first.slice(1).forEach((a) => slabs.release(a));
    expect(slabs.footprint.slabs).toBe(2); // one entry still held
    slabs.release(first[0]!);
    expect(slabs.footprint.slabs).toBe(1);
    slabs.release(second);
    expect(slabs.footprint.slabs).toBe(1); // the current slab stays
    const reused = slabs.append(0, bytes(8, 3));
    expect([...slabs.copy(reused)]).toEqual([...bytes(8, 3)]);
    expect(() => slabs.copy(first[0]!)).toThrow(/no slab/);
  });

  it("stores an entry larger than a slab in a slab of its own, freed with it", () => {
    const slabs = new ByteSlabs();
    const small = slabs.append(0, bytes(100, 1));
    const big = slabs.append(1, bytes(SLAB_BYTES + 10, 9));
    expect(slabs.footprint.bytes).toBe(SLAB_BYTES + SLAB_BYTES + 10 + 5);
    expect(slabs.copy(big).byteLength).toBe(SLAB_BYTES + 10);
    expect(slabs.header(big)).toBe(1);
    slabs.release(big);
    expect(slabs.footprint.slabs).toBe(1);
    expect([...slabs.copy(small)]).toEqual([...bytes(100, 1)]);
  });
});

describe("ByteSlabs: strings (task and context ids) stored exactly", () => {
  it("reads back and compares latin1, wide, empty and lone-surrogate strings without merging any two", () => {
    const slabs = new ByteSlabs();
    const strings = ["", "a", "0b7c1e4a-9d1f-4c55-8f0e-3a7a2c1d9e00", "café", "日本語", "😀", "\ud83d", "\ude00", "\ufffd", "x\u00ffy", "x\u0100y"];
    const addresses = strings.map((s) => slabs.appendString(s));
    strings.forEach((s, i) => {
      expect(slabs.readString(addresses[i]!)).toBe(s);
      strings.forEach((other, j) => expect(slabs.stringEquals(addresses[i]!, other)).toBe(i === j));
    });
  });

  it("stores a one-byte-per-char id in as many bytes as it has chars", () => {
    const slabs = new ByteSlabs();
    const first = slabs.appendString("abcd");
    const second = slabs.appendString("é");
    const third = slabs.appendString("日");
    expect(second - first).toBe(4 + 1 + 4); // length, header, 4 latin1 bytes
    expect(third - second).toBe(4 + 1 + 1);
    slabs.release(first);
    expect(slabs.readString(third)).toBe("日");
  });
});

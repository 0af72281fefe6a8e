import { toBinary, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { MAX_JSON_DEPTH, UnrepresentableJsonError, checkJsonObject, jsonToValue } from "../../src/lifecycle/model/json-value.js";

/** plain JSON from an agent becomes google.protobuf.Value; what JSON cannot hold is refused with its path. */
describe("A-27: plain JSON to google.protobuf.Value", () => {
  const kinds: Array<[string, unknown]> = [
    ["an object", { key: "value", count: 42 }],
    ["an array", [1, "two", false, null]],
    ["a string", "hello"],
    ["a number", -12.5],
    ["zero", 0],
    ["true", true],
    ["false", false],
    ["null", null],
    ["an empty object", {}],
    ["an empty array", []],
    ["a nested mix", { a: [{ b: { c: [[], [null, { d: "e" }]] } }], "odd key": 1, "": "empty key" }],
  ];
  it.each(kinds)("A-27: %s converts to the Value that reads back as the same JSON", (_name, json) => {
    expect(toJson(ValueSchema, jsonToValue(json, "parts[0].data"))).toEqual(json);
  });

  it("A-27: an object created without a prototype is a plain object", () => {
    const bare = Object.assign(Object.create(null) as object, { x: 1 });
    expect(toJson(ValueSchema, jsonToValue(bare, "d"))).toEqual({ x: 1 });
  });

  it("A-27: an undefined property is left out, as JSON.stringify leaves it out", () => {
    expect(toJson(ValueSchema, jsonToValue({ a: 1, b: undefined }, "d"))).toEqual({ a: 1 });
  });

  it('A-27: a "__proto__" key (as JSON.parse makes it) stays a field', () => {
    const parsed = JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as unknown;
    const converted = jsonToValue(parsed, "d");
    expect(Object.keys((converted.kind.value as { fields: object }).fields)).toEqual(["__proto__", "y"]);
    // On the wire (protobuf-es's own toJson would drop it again, so read the bytes).
    expect(Buffer.from(toBinary(ValueSchema, converted)).includes("__proto__")).toBe(true);
  });

  it("A-27: the same object twice (no cycle) is fine", () => {
    const shared = { x: 1 };
    expect(toJson(ValueSchema, jsonToValue({ a: shared, b: [shared, shared] }, "d"))).toEqual({ a: { x: 1 }, b: [{ x: 1 }, { x: 1 }] });
  });

  const cycle: Record<string, unknown> = { name: "loop" };
  cycle["self"] = { again: cycle };
  const holey = [1, , 3]; // eslint-disable-line no-sparse-arrays
  const bad: Array<[string, unknown, string, RegExp]> = [
    ["a function", { f: () => 1 }, "parts[1].data.f", /function/],
    ["a BigInt", { n: 10n }, "parts[1].data.n", /BigInt/],
    ["a symbol value", ["ok", Symbol("s")], "parts[1].data[1]", /symbol/],
    ["a symbol key", { [Symbol("k")]: 1 }, "parts[1].data", /symbol key/],
    ["NaN", { x: { y: NaN } }, "parts[1].data.x.y", /NaN/],
    ["Infinity", [Infinity], "parts[1].data[0]", /Infinity/],
    ["-Infinity", -Infinity, "parts[1].data", /Infinity/],
    ["undefined in an array", [1, undefined], "parts[1].data[1]", /undefined/],
    ["a hole in an array", holey, "parts[1].data[1]", /hole/],
    ["undefined itself", undefined, "parts[1].data", /undefined/],
    ["a cycle", cycle, "parts[1].data.self.again", /cycle/],
    ["a Date", { when: new Date(0) }, "parts[1].data.when", /Date.*not a plain JSON object/],
    ["a Map", new Map([["a", 1]]), "parts[1].data", /Map/],
    ["bytes", { raw: new Uint8Array([1]) }, "parts[1].data.raw", /Uint8Array/],
    [
      "a class instance",
      {
        v: new (class Point {
          x = 1;
        })(),
      },
      "parts[1].data.v",
      /Point/,
    ],
    ["an odd key's bad value", { "a b": () => 0 }, 'parts[1].data["a b"]', /function/],
  ];
  it.each(bad)("A-27: %s is refused, naming the exact place", (_name, json, path, problem) => {
    let error: unknown;
    try {
      jsonToValue(json, "parts[1].data");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UnrepresentableJsonError);
    expect((error as UnrepresentableJsonError).path).toBe(path);
    expect((error as Error).message).toMatch(problem);
    expect((error as Error).message.startsWith(`${path}: `)).toBe(true);
  });

  it(`A-27: nesting deeper than ${MAX_JSON_DEPTH} levels is refused (no stack overflow)`, () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(() => jsonToValue(deep, "d")).toThrow(/nests deeper than 100 levels/);
    let fine: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH; i++) fine = [fine];
    expect(toJson(ValueSchema, jsonToValue(fine, "d"))).toEqual(fine);
  });

  it("A-27: checkJsonObject accepts a JSON object and refuses anything else, naming the field", () => {
    expect(() => checkJsonObject({ a: [1, { b: null }] }, "metadata")).not.toThrow();
    expect(() => checkJsonObject([1], "metadata")).toThrow(/^metadata: must be a plain JSON object, not an array/);
    expect(() => checkJsonObject({ a: NaN }, "metadata")).toThrow(/^metadata\.a: NaN/);
  });
});

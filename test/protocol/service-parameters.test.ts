/** A2A service parameters from gRPC metadata: version negotiation (R-VER-*) and extensions (R-EXT-*). */
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { AgentExtensionSchema, type AgentExtension } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { ExtensionSupportRequiredError, VersionNotSupportedError } from "../../src/lifecycle/model/errors.js";
import {
  checkRequiredExtensions,
  declaredRequestedExtensions,
  formatActivatedExtensions,
  readRequestedExtensions,
  readVersion,
  SUPPORTED_VERSIONS,
} from "../../src/service/service-parameters.js";

/** Metadata as grpc-js builds it from the wire; `add` repeats an entry. */
function metadata(entries: Array<[string, string]>): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const [key, value] of entries) md.add(key, value);
  return md;
}

const strict = { allowMissing: false };
const lenient = { allowMissing: true };

function versionError(run: () => unknown): VersionNotSupportedError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(VersionNotSupportedError);
    return error as VersionNotSupportedError;
  }
  throw new Error("expected VersionNotSupportedError");
}

describe("readVersion", () => {
  test("the server speaks 1.0", () => {
    expect(SUPPORTED_VERSIONS).toEqual(["1.0"]);
  });

  test.each<[string, Array<[string, string]>]>([
    ["R-VER-3: exactly 1.0", [["a2a-version", "1.0"]]],
    ["R-VER-5: a patch number is ignored", [["a2a-version", "1.0.3"]]],
    ["R-VER-5: leading zeros are the same number", [["a2a-version", "01.00"]]],
    ["R-VER-1: keys are case-insensitive (grpc-js lower-cases them)", [["A2A-Version", "1.0"]]],
    ["R-VER-2: comma-separated, the first supported one wins", [["a2a-version", "0.3, 1.0"]]],
    [
      "R-VER-2: repeated entries",
      [
        ["a2a-version", "2.0"],
        ["a2a-version", "1.0"],
      ],
    ],
    ["R-VER-2: blanks around and empty items are ignored", [["a2a-version", " , 1.0 ,"]]],
  ])("%s -> 1.0", (_name, entries) => {
    expect(readVersion(metadata(entries), strict)).toBe("1.0");
  });

  test("R-VER-4 / A-3: no header reads as 0.3, which a 1.0-only server refuses with FAILED_PRECONDITION's error", () => {
    const error = versionError(() => readVersion(metadata([]), strict));
    expect(error.reason).toBe("VERSION_NOT_SUPPORTED");
    expect(error.kind).toBe("failed_precondition");
    expect(error.metadata).toEqual({ requested_version: "", supported_versions: "1.0" });
    // R-VER-7: actionable: it says which header to send.
    expect(error.message).toContain('"a2a-version: 1.0"');
    expect(error.message).toContain("0.3");
  });

  test("R-VER-4 / A-3: an empty header is the same as none", () => {
    versionError(() => readVersion(metadata([["a2a-version", ""]]), strict));
    versionError(() => readVersion(metadata([["a2a-version", " , "]]), strict));
  });

  test("A-3: with the operator option, a missing or empty header reads as 1.0", () => {
    expect(readVersion(metadata([]), lenient)).toBe("1.0");
    expect(readVersion(metadata([["a2a-version", ""]]), lenient)).toBe("1.0");
  });

  test("A-3: the operator option does not excuse an unsupported version that was sent", () => {
    versionError(() => readVersion(metadata([["a2a-version", "0.3"]]), lenient));
  });

  test.each<[string, string]>([
    ["R-VER-3: 0.3 is not served", "0.3"],
    ["R-VER-5: minor versions differ", "1.1"],
    ["R-VER-3: a newer major", "2.0"],
    ["garbage", "abc"],
    ["a major without minor", "1"],
    ["a prefixed version", "v1.0"],
    ["too many parts", "1.0.0.0"],
    ["negative", "-1.0"],
  ])("%s (%s) -> VersionNotSupportedError naming what was sent", (_name, sent) => {
    const error = versionError(() => readVersion(metadata([["a2a-version", sent]]), strict));
    expect(error.metadata.requested_version).toBe(sent);
    expect(error.metadata.supported_versions).toBe("1.0");
    expect(error.message).toContain(JSON.stringify(sent));
  });

  test("R-VER-2: several unsupported versions are all reported", () => {
    const error = versionError(() =>
      readVersion(
        metadata([
          ["a2a-version", "0.3,2.0"],
          ["a2a-version", "1.1"],
        ]),
        strict,
      ),
    );
    expect(error.metadata.requested_version).toBe("0.3,2.0,1.1");
  });
});

describe("extensions", () => {
  const ext = (uri: string, required = false): AgentExtension => create(AgentExtensionSchema, { uri, required });
  const A = "https://ext.example/a/v1";
  const B = "https://ext.example/b/v1";
  const B2 = "https://ext.example/b/v2";

  test.each<[string, Array<[string, string]>, string[]]>([
    ["R-EXT-1: none requested", [], []],
    ["R-EXT-1: one URI", [["a2a-extensions", A]], [A]],
    ["R-EXT-1: comma-separated, trimmed", [["a2a-extensions", ` ${A} ,${B} `]], [A, B]],
    [
      "R-EXT-1: repeated entries",
      [
        ["a2a-extensions", A],
        ["a2a-extensions", B],
      ],
      [A, B],
    ],
    [
      "R-EXT-1: duplicates collapse, order kept",
      [
        ["a2a-extensions", `${B},${A}`],
        ["a2a-extensions", B],
      ],
      [B, A],
    ],
    ["R-EXT-1: empty items ignored", [["a2a-extensions", ",, ,"]], []],
    ["R-EXT-1: key case does not matter", [["A2A-Extensions", A]], [A]],
  ])("%s", (_name, entries, expected) => {
    expect(readRequestedExtensions(metadata(entries))).toEqual(expected);
  });

  test("R-EXT-3: a required extension that was not requested fails with EXTENSION_SUPPORT_REQUIRED listing all missing", () => {
    let caught: unknown;
    try {
      checkRequiredExtensions([B], [ext(A, true), ext(B, true), ext(B2, true), ext("https://ext.example/optional")]);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ExtensionSupportRequiredError);
    const error = caught as ExtensionSupportRequiredError;
    expect(error.kind).toBe("failed_precondition");
    expect(error.metadata).toEqual({ required_extensions: `${A},${B2}` });
    expect(error.message).toContain(A);
    expect(error.message).toContain("a2a-extensions");
  });

  test("R-EXT-3: all required extensions requested -> passes", () => {
    expect(() => checkRequiredExtensions([A, B], [ext(A, true), ext(B, true)])).not.toThrow();
  });

  test("R-EXT-2: requested but unknown extensions are ignored, not errors", () => {
    expect(() => checkRequiredExtensions(["https://unknown.example/x"], [ext(A)])).not.toThrow();
    expect(() => checkRequiredExtensions(["https://unknown.example/x"], [])).not.toThrow();
  });

  test("R-EXT-4: another version of a required extension does not satisfy it", () => {
    expect(() => checkRequiredExtensions([B2], [ext(B, true)])).toThrow(ExtensionSupportRequiredError);
  });

  test("R-EXT-2 / R-EXT-4: only declared URIs, matched exactly, are candidates for activation", () => {
    expect(declaredRequestedExtensions([B2, A, "https://unknown.example/x"], [ext(A), ext(B)])).toEqual([A]);
  });

  test("R-EXT-5: activated extensions are echoed as one comma-separated header value that reads back the same", () => {
    const header = formatActivatedExtensions([A, B, A]);
    expect(header).toBe(`${A}, ${B}`);
    expect(readRequestedExtensions(metadata([["a2a-extensions", header]]))).toEqual([A, B]);
    expect(formatActivatedExtensions([])).toBe("");
  });
});

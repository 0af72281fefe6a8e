import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, test } from "@jest/globals";

const root = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Run in a child with V8's natives syntax, which can tell whether two objects share a hidden
 * class (map). `%HaveSameMap` is compiled by `new Function` at run time, so no loader parses it.
 */
const CHILD = `
const sameMap = new Function("a", "b", "return %HaveSameMap(a, b)");
const { artifactLiteral, newTaskLiteral, taskStatusLiteral, textPartLiteral, timestampLiteral } = await import("./src/lifecycle/model/message-literals.ts");
const { applyChange } = await import("./src/lifecycle/writes/task-change.ts");
const { partsFromInput } = await import("./src/lifecycle/model/part-input.ts");
const { cloneTask } = await import("./src/codec/task-clone.ts");
const artifact = (id, parts) => artifactLiteral({ artifactId: id, name: "out", description: "", parts, metadata: undefined, extensions: [] });
const listOfObjects = [artifact("a", [textPartLiteral("x")])];
const task = newTaskLiteral("t", "c", taskStatusLiteral(2, undefined, timestampLiteral(1n, 0)), []);
const freshArtifacts = task.artifacts;
const cloned = cloneTask(task);
applyChange(task, { kind: "artifact", artifact: artifact("a", partsFromInput(["one"], "parts")), append: false, lastChunk: false });
applyChange(task, { kind: "artifact", artifact: artifact("a", partsFromInput(["two", "three"], "parts")), append: true, lastChunk: false });
console.log(JSON.stringify({
  newTaskArtifacts: sameMap(freshArtifacts, listOfObjects),
  clonedEmptyArtifacts: sameMap(cloned.artifacts, listOfObjects),
  clonedEmptyHistory: sameMap(cloned.history, listOfObjects),
  storedArtifact: sameMap(task.artifacts[0], listOfObjects[0]),
  oneInputPart: sameMap(partsFromInput(["x"], "parts"), [textPartLiteral("x")]),
  twoInputParts: sameMap(partsFromInput(["x", "y"], "parts"), [textPartLiteral("x"), textPartLiteral("y")]),
  storedParts: sameMap(task.artifacts[0].parts, [textPartLiteral("x")]),
}));
`;

// Why this matters: a stream's write path (store, event ring, encoder) is optimized by V8 for the
// shapes it sees; an artifact list or artifact of another shape at the start of each stream threw
// that code away and compiled it again, tens of ms of compiler CPU per stream of a few thousand
// chunks (bench: `npm run bench -- streaming --server-dir=DIR`).
test("issue 15 item 2 (per-turn cost): task artifact lists, stored artifacts and agent parts lists share one shape with the literals the stream path sees", () => {
  const out = execFileSync(process.execPath, ["--allow-natives-syntax", "--import", "tsx", "--input-type=module", "-e", CHILD], {
    cwd: root,
    encoding: "utf8",
  });
  expect(JSON.parse(out.trim().split("\n").pop()!)).toEqual({
    newTaskArtifacts: true,
    clonedEmptyArtifacts: true,
    clonedEmptyHistory: true,
    storedArtifact: true,
    oneInputPart: true,
    twoInputParts: true,
    storedParts: true,
  });
}, 30_000);

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import Database from "better-sqlite3";
import { ArtifactSchema, PartSchema, TaskSchema, TaskState, type Artifact, type Part, type Task } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { mergeArtifact } from "../../src/lifecycle/writes/task-change.js";
import { mergeArtifactsBlob } from "../../src/storage/sqlite/artifacts-blob.js";
import { encodeArtifactChanges } from "../../src/storage/sqlite/event-row-codec.js";
import { openSqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import { encodeArtifacts } from "../../src/storage/sqlite/task-row-codec.js";
import { Clock, artifactChange, newTask, scopeOf, statusChange } from "../support/tasks.js";
import { ackedOnCommit, answered } from "../support/answered.js";

/**
 * Issue 15 item 5: when the SQLite store rewrites a task's artifacts blob (its tail has grown
 * as large as it, or the task finished), the new blob is joined from the bytes of the stored
 * blob and of the changes since, without encoding any chunk again. It must be the blob the
 * encoder writes for the merged artifacts: byte for byte (and so toBinary's bytes).
 */

/** Byte equality without an element-by-element diff of large arrays. */
const same = (a: Uint8Array | null | undefined, b: Uint8Array | null | undefined) =>
  a != null && b != null && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

/** A seeded generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Change = { kind: "artifact"; artifact: Artifact; append: boolean; lastChunk: boolean };

function generator(seed: number) {
  const r = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  // Short and long (lengths of one and two varint bytes; an artifact of many parts needs three).
  const text = () => pick(["", "a", "#seq=1;", "é🙂ß", "x".repeat(130 + Math.floor(r() * 300))]);
  const part = (): Part => {
    const kind = Math.floor(r() * 5);
    const extra = r() < 0.2 ? { mediaType: "text/plain", filename: "f.txt" } : {};
    const metadata = r() < 0.15 ? { metadata: { k: pick(["v", "é"]), n: Math.floor(r() * 1000), nested: { on: r() < 0.5 } } } : {};
    if (kind === 1) return create(PartSchema, { content: { case: "raw", value: new Uint8Array(Math.floor(r() * 300)).fill(7) }, ...extra, ...metadata });
    if (kind === 2) return create(PartSchema, { content: { case: "url", value: "https://example.test/x" }, ...extra });
    if (kind === 3) return create(PartSchema, { content: { case: "data", value: create(ValueSchema, { kind: { case: "stringValue", value: text() } }) } });
    return create(PartSchema, { content: { case: "text", value: text() }, ...extra, ...metadata });
  };
  const artifact = (ids: readonly string[]): Artifact =>
    create(ArtifactSchema, {
      artifactId: pick(ids),
      name: r() < 0.5 ? pick(["answer", "ré"]) : "",
      description: r() < 0.2 ? "a description" : "",
      parts: Array.from({ length: 1 + Math.floor(r() * (r() < 0.1 ? 40 : 3)) }, part),
      metadata: r() < 0.2 ? { seq: Math.floor(r() * 100), tag: pick(["m", "ü"]) } : undefined,
      extensions: r() < 0.2 ? [pick(["urn:a", "urn:b", "urn:c"])] : [],
    });
  const change = (ids: readonly string[]): Change => ({ kind: "artifact", artifact: artifact(ids), append: r() < 0.8, lastChunk: r() < 0.1 });
  return { r, artifact, change };
}

/** What the repository does: the blob, then the tail rows and the batch, each a framed body of changes. */
const merged = (blob: Uint8Array | null, bodies: readonly Uint8Array[], expected: readonly Artifact[]) => mergeArtifactsBlob(blob, bodies, expected);

const taskOf = (artifacts: Artifact[]): Task => create(TaskSchema, { artifacts });

test("issue 15 item 5: a blob joined from stored bytes and framed changes is byte-identical to encoding (and toBinary of) the merged artifacts", () => {
  let cases = 0;
  for (let seed = 1; seed <= 100; seed++) {
    const g = generator(seed);
    const ids = ["out", "b", "ç", "d"].slice(0, 1 + (seed % 4));
    const start = Array.from({ length: Math.floor(g.r() * 3) }, () => g.artifact(ids));
    // The reference: mergeArtifact on the task, as the store applies each write.
    const task = taskOf([]);
    for (const a of start) mergeArtifact(task, a, false);
    const blob = encodeArtifacts(task.artifacts);
    const bodies: Uint8Array[] = [];
    for (let rows = 1 + Math.floor(g.r() * 4); rows > 0; rows--) {
      const changes = Array.from({ length: 1 + Math.floor(g.r() * 30) }, () => g.change(ids));
      for (const c of changes) mergeArtifact(task, c.artifact, c.append);
      bodies.push(encodeArtifactChanges(changes));
    }
    const joined = merged(blob, bodies, task.artifacts);
    expect(joined).toBeDefined();
    const encoded = encodeArtifacts(task.artifacts);
    if (!same(joined, encoded)) throw new Error(`seed ${seed}: the joined blob differs from the encoded one`);
    if (seed % 10 === 0) {
      expect(same(joined, toBinary(TaskSchema, taskOf(task.artifacts)))).toBe(true);
      expect(fromBinary(TaskSchema, joined!).artifacts).toEqual(fromBinary(TaskSchema, encoded!).artifacts);
    }
    cases++;
  }
  expect(cases).toBe(100);
});

test("issue 15 item 5: a long burst of appends to one artifact, rewritten each time the tail outgrows the blob, gives the encoder's bytes at every rewrite", () => {
  const chunk = (i: number) =>
    create(ArtifactSchema, { artifactId: "out", name: "out", parts: [create(PartSchema, { content: { case: "text", value: `#seq=${i};` } })] });
  const task = taskOf([]);
  let blob: Uint8Array | null = null;
  let tail: Uint8Array[] = [];
  let tailBytes = 0;
  let rewrites = 0;
  for (let commit = 0; commit < 30; commit++) {
    const changes = Array.from({ length: 1000 }, (_, i) => ({
      kind: "artifact" as const,
      artifact: chunk(commit * 1000 + i),
      append: commit + i > 0,
      lastChunk: false,
    }));
    for (const c of changes) mergeArtifact(task, c.artifact, c.append);
    const body = encodeArtifactChanges(changes);
    if (tailBytes + body.length <= Math.max(blob?.length ?? 0, 16 * 1024)) {
      tail.push(body);
      tailBytes += body.length;
      continue;
    }
    const next = merged(blob, [...tail, body], task.artifacts);
    if (!same(next, encodeArtifacts(task.artifacts))) throw new Error(`commit ${commit}: the rewritten blob differs`);
    blob = next!;
    rewrites++;
    tail = [];
    tailBytes = 0;
  }
  expect(task.artifacts[0]!.parts).toHaveLength(30_000);
  expect(rewrites).toBeGreaterThan(3);
});

test("issue 15 item 5: bytes it cannot take apart, or a merge that would not give the task's artifacts, give no blob (the store then encodes)", () => {
  const a = create(ArtifactSchema, { artifactId: "out", parts: [create(PartSchema, { content: { case: "text", value: "x" } })] });
  const changes = [{ kind: "artifact" as const, artifact: a, append: true, lastChunk: false }];
  const expected = taskOf([]);
  mergeArtifact(expected, a, true);
  expect(merged(null, [encodeArtifactChanges(changes)], expected.artifacts)).toBeDefined();
  // An artifact with a field this proto does not have (kept by protobuf-es as unknown, written after its own).
  const withUnknown = create(ArtifactSchema, { ...a, $unknown: [{ no: 99, wireType: 2, data: Uint8Array.of(1, 0x41) }] });
  expect(merged(encodeArtifacts([withUnknown]), [encodeArtifactChanges(changes)], [withUnknown])).toBeUndefined();
  // Not what the task holds: another id, another count of parts, an id whose UTF-8 is lossy (a lone surrogate).
  expect(merged(null, [encodeArtifactChanges(changes)], [{ ...a, artifactId: "other" }])).toBeUndefined();
  expect(merged(null, [encodeArtifactChanges(changes)], [{ ...a, parts: [...a.parts, ...a.parts] }])).toBeUndefined();
  const lossy = create(ArtifactSchema, { ...a, artifactId: "a\ud800" });
  const lossyTask = taskOf([]);
  mergeArtifact(lossyTask, lossy, true);
  expect(merged(null, [encodeArtifactChanges([{ ...changes[0]!, artifact: lossy }])], lossyTask.artifacts)).toBeUndefined();
  // A blob that is not a Task of artifacts only.
  expect(merged(Uint8Array.of(0x0a, 0x01, 0x41), [encodeArtifactChanges(changes)], expected.artifacts)).toBeUndefined();
});

test("issue 15 item 5: through the store, every rewritten blob is the encoder's bytes of what a read gives, and every read (blob and tail joined) gives the merged artifacts, also after a reopen and with bytes it cannot join", async () => {
  const dir = mkdtempSync(join(tmpdir(), "a2a-sqlite-blob-"));
  const file = join(dir, "tasks.db");
  let repo = ackedOnCommit(openSqliteTaskRepository({ file }));
  const reader = new Database(file, { readonly: true });
  try {
    const alice = scopeOf("t1", "alice");
    const clock = new Clock();
    const g = generator(7);
    const task = newTask({ micros: clock.next(), text: "q" });
    await repo.create(alice, task);
    let version = await repo.update(alice, task.id, 1, statusChange(TaskState.WORKING, clock.next()));
    const blobOf = () =>
      reader
        .prepare("SELECT coalesce(a.artifacts, t.artifacts) FROM tasks t LEFT JOIN task_artifacts a ON a.task_pk = t.pk WHERE t.id = ?")
        .pluck()
        .get(task.id) as Uint8Array | null;
    let rewrites = 0;
    let lastBlob: Uint8Array | null = null;
    const reference = taskOf([]); // mergeArtifact applied to each change, as the guard applies it
    const listed = async () => (await repo.list(alice, { pageSize: 1, includeArtifacts: true })).tasks[0]!.artifacts; // read from the rows
    for (let commit = 0; commit < 40; commit++) {
      if (commit === 20) {
        await repo.close(); // the next writes start from the row: blob and tail read back
        repo = ackedOnCommit(openSqliteTaskRepository({ file }));
      }
      for (let i = 0; i < 25; i++) {
        let change = g.change(["out", "b"]);
        if (commit === 30 && i === 0)
          change = { ...change, artifact: create(ArtifactSchema, { ...change.artifact, $unknown: [{ no: 99, wireType: 2, data: Uint8Array.of(0) }] }) };
        version = answered(repo.now.update(alice, task.id, version, artifactChange(change.artifact, change.append, change.lastChunk)));
        mergeArtifact(reference, change.artifact, change.append);
      }
      await new Promise((resolve) => setImmediate(resolve));
      expect(await listed()).toEqual(reference.artifacts);
      const blob = blobOf();
      if (blob !== null && !same(blob, lastBlob)) {
        rewrites++;
        lastBlob = blob;
        const read = (await repo.get(alice, task.id))!.task;
        expect(same(blob, encodeArtifacts(read.artifacts))).toBe(true);
      }
    }
    // The last chunk and the end in one commit, as an agent's burst ends: the blob is rewritten whole, the tail emptied.
    answered(repo.now.update(alice, task.id, version++, artifactChange(g.change(["out"]).artifact, true, true)));
    await repo.update(alice, task.id, version, statusChange(TaskState.COMPLETED, clock.next()));
    const done = (await repo.get(alice, task.id))!.task;
    expect(same(blobOf(), toBinary(TaskSchema, taskOf(done.artifacts)))).toBe(true);
    expect(rewrites).toBeGreaterThan(2);
  } finally {
    reader.close();
    await repo.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

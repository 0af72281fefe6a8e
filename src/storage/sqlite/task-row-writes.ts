import { statusMicros, isTerminal } from "../../lifecycle/index.js";
import { mergeArtifactsBlob } from "./artifacts-blob.js";
import { encodeArtifactChanges, encodeEvent, encodeEventBatch } from "./event-row-codec.js";
import type { SqlitePushStore } from "./sqlite-push-store.js";
import type { StagedTask } from "./staged-task.js";
import type { TaskStatements } from "./task-statements.js";
import { encodeArtifacts, encodeMessage, encodeTaskCore } from "./task-row-codec.js";

/** Artifact changes kept apart from a blob smaller than this before it is rewritten (see appendToTail). */
const MIN_TAIL_BYTES = 16 * 1024;
/**
 * The tail may grow to this many times the blob before the blob is rewritten (see appendToTail):
 * each rewrite makes the blob four times larger, so an answer's rewrites write about 1.3 times
 * its final size, not 2 times as when the tail was rewritten at the blob's size. Reads do not pay
 * for a long tail: they join it with the blob as bytes and decode once (readArtifacts).
 */
const TAIL_PER_BLOB = 3;
/**
 * Writes a staged task to its rows, inside the batch transaction: the task row (inserted, or only
 * the columns its writes changed), its new messages, its artifacts (a tail row of this batch's
 * changes, or the blob rewritten), its outbox rows and its event rows.
 */
export class TaskRowWriter {
  constructor(
    private readonly s: TaskStatements,
    private readonly push: SqlitePushStore,
  ) {}

  /** One staged task to its row: inserted if new, else only the columns its writes changed; then its new messages. */
  write(staged: StagedTask): void {
    const task = staged.task;
    const historyLen = staged.storedHistoryLength + staged.newHistory.length;
    let pk = staged.pk;
    let artifacts: Uint8Array | null;
    let changesBody: Uint8Array | undefined;
    let inTail = false; // whether this batch's artifact changes went to a tail row (as changesBody)
    if (pk === undefined) {
      pk = Number(
        this.s.insertTask.run({
          id: task.id,
          scopeId: staged.scopeId,
          contextId: task.contextId,
          state: task.status!.state,
          statusMicros: statusMicros(task),
          version: staged.version,
          historyLen,
          task: encodeTaskCore(task),
          artifacts: (artifacts = encodeArtifacts(task.artifacts)),
        }).lastInsertRowid,
      );
      staged.pk = pk;
      staged.storedArtifacts = artifacts;
      staged.artifactBytes = artifacts?.length ?? 0;
      staged.artifactsInline = artifacts !== null;
    } else {
      const version = staged.version;
      if (staged.statusChanged) {
        this.s.updateStatus.run({ pk, state: task.status!.state, statusMicros: statusMicros(task), version, historyLen, task: encodeTaskCore(task) });
      }
      // This batch's artifact changes, framed once: for the tail row, the blob rewrite and the event row.
      if (staged.newArtifactChanges !== undefined) changesBody = encodeArtifactChanges(staged.newArtifactChanges);
      inTail = staged.artifactsChanged && this.appendToTail(staged, pk, historyLen, changesBody);
      if (!inTail) {
        if (staged.artifactsChanged) {
          const artifacts = this.rewrittenArtifacts(staged, pk, changesBody);
          this.s.updateArtifacts.run({ pk, version, historyLen });
          this.s.putArtifacts.run(pk, artifacts);
          staged.artifactsInline = false;
          if (staged.tailBytes > 0) {
            this.s.eventBodiesOutOfTail.run(pk); // the events kept for resuming keep their bodies
            this.s.clearTail.run(pk);
          }
          staged.storedArtifacts = artifacts;
          staged.artifactBytes = artifacts?.length ?? 0;
          staged.tailBytes = 0;
        } else if (!staged.statusChanged) this.s.updateVersion.run({ pk, version, historyLen });
      }
    }
    for (let i = 0; i < staged.newHistory.length; i++) {
      this.s.insertHistory.run(pk, staged.storedHistoryLength + i, encodeMessage(staged.newHistory[i]!));
    }
    if (staged.push !== undefined) this.push.writeStaged(pk, staged.push);
    const events = staged.newEvents;
    if (events !== undefined) {
      const at = Date.now() * 1000;
      if (events.length === 1) this.s.insertEvent.run(pk, events[0]!.version, at, ...encodeEvent(events[0]!));
      else {
        // A commit of artifact changes only: the event row's body is the tail row's, byte for byte
        // (both frame the same artifact changes in order), so it is encoded once, and written
        // once when that tail row holds it.
        const same = changesBody !== undefined && events.length === staged.newArtifactChanges!.length && events.every((e) => e.kind === "artifact");
        const last = events[events.length - 1]!.version;
        if (same && inTail) this.s.insertEventsInTail.run(pk, last, events[0]!.version, at);
        else this.s.insertEvents.run(pk, last, events[0]!.version, at, same ? changesBody : encodeEventBatch(events));
      }
    }
  }

  /**
   * Writes this batch's artifact changes of a task that has a row as one `artifact_tail` row,
   * unless the tail would outgrow the blob (or the task is finished): then the caller rewrites
   * the blob. Rewriting only when the tail is as large as the blob keeps the bytes written
   * linear in the artifact's size however many commits it takes. `body`: the changes, framed.
   * Whether it wrote them.
   */
  private appendToTail(staged: StagedTask, pk: number, historyLen: number, body: Uint8Array | undefined): boolean {
    if (body === undefined || isTerminal(staged.task.status!.state)) return false;
    if (staged.tailBytes + body.length > Math.max(staged.artifactBytes * TAIL_PER_BLOB, MIN_TAIL_BYTES)) return false;
    if (staged.artifactsInline) {
      // Out of the task's row first: every later update of the row would rewrite it.
      this.s.moveArtifacts.run(pk);
      this.s.clearInline.run(pk);
      staged.artifactsInline = false;
    }
    this.s.insertTail.run(pk, staged.version, body);
    staged.tailBytes += body.length;
    this.s.updateTail.run({ pk, version: staged.version, historyLen, tailBytes: staged.tailBytes });
    return true;
  }

  /**
   * The task's artifacts blob after this batch: joined from the bytes of the stored blob, its tail
   * rows and this batch's changes (`body`) when all of them are at hand as bytes, so no chunk
   * is encoded again; else (a task created in this batch, bytes artifacts-blob.ts cannot take
   * apart) encoded from `task.artifacts`.
   */
  private rewrittenArtifacts(staged: StagedTask, pk: number, body: Uint8Array | undefined): Uint8Array | null {
    const task = staged.task;
    if (body === undefined) return encodeArtifacts(task.artifacts);
    const bodies = staged.tailBytes > 0 ? (this.s.tailOf.all(pk) as Uint8Array[]) : [];
    bodies.push(body);
    return mergeArtifactsBlob(staged.storedArtifacts, bodies, task.artifacts) ?? encodeArtifacts(task.artifacts);
  }
}

import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { EVENT_KIND } from "./event-rows.js";

/** StreamResponse field numbers (lf.a2a.v1): task = 1, status_update = 3, artifact_update = 4. */
const STREAM_RESPONSE_FIELD: Readonly<Record<number, number>> = {
  [EVENT_KIND.created]: 1,
  [EVENT_KIND.status]: 3,
  [EVENT_KIND.artifact]: 4,
};

/**
 * The webhook event (an lf.a2a.v1.StreamResponse in binary) of an outbox row. A row keeps the
 * kind and body its write also put in `a2a_task_events` (a Task, or a status or artifact update
 * event), so the write sends those bytes once; the StreamResponse around them is one field, so
 * it is the body behind that field's tag and length, byte for byte what toBinary would write.
 */
export function pushEventOfRow(kind: number, body: Uint8Array): Uint8Array {
  const field = STREAM_RESPONSE_FIELD[kind];
  if (field === undefined) throw new Error(`push outbox row of unknown kind ${kind}`);
  return new BinaryWriter().tag(field, WireType.LengthDelimited).bytes(body).finish();
}

/** Whether a write of this event kind owes webhooks anything (a history write has no event of its own, as on streams). */
export function owesPush(kind: number): boolean {
  return STREAM_RESPONSE_FIELD[kind] !== undefined && kind !== EVENT_KIND.created;
}

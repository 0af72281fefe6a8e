import type { CallMetadata } from "./face.js";
import { InvalidRequestError } from "../lifecycle/index.js";
import { RESUME_CURSOR_HEADER, decodeCursor } from "../streams/index.js";

/**
 * The version a SubscribeToTask resumes after, from the cursor header; undefined when
 * the header is absent (a plain subscribe). A cursor this server did not make, or one of
 * another task than the request's, is INVALID_ARGUMENT naming the header (never echoing it).
 */
export function readResumeCursor(metadata: CallMetadata, taskId: string): number | undefined {
  const values = metadata.get(RESUME_CURSOR_HEADER);
  if (values.length === 0) return undefined;
  const refuse = (why: string) => InvalidRequestError.field(RESUME_CURSOR_HEADER, why);
  if (values.length > 1) throw refuse("send one cursor: the last one received");
  const value = values[0];
  const cursor = typeof value === "string" ? decodeCursor(value.trim()) : undefined;
  if (cursor === undefined) throw refuse("is not a stream cursor of this server; send the cursor of the last event received, as received");
  if (cursor.taskId !== taskId) throw refuse("is the cursor of another task than the request's id");
  return cursor.version;
}

import { InvalidRequestError } from "../lifecycle/index.js";

/*
 * The v1.0 face names a bad field by its v1.0 path (message.parts[0].url); a v0.3 client sent
 * another message, so its BadRequest names the v0.3 path (request.content[0].file.file_with_uri).
 * One renaming per v0.3 request shape; a path with no v0.3 counterpart is kept as is.
 */

export type FieldRenaming = (field: string) => string;

/** v1.0 part fields → v0.3 (Part.file / Part.data). */
function partField(rest: string): string {
  return rest
    .replace(/^\.url\b/, ".file.file_with_uri")
    .replace(/^\.raw\b/, ".file.file_with_bytes")
    .replace(/^\.media_type\b/, ".file.mime_type")
    .replace(/^\.data\b/, ".data.data");
}

/** A flat v1.0 push config's fields as those of a v0.3 PushNotificationConfig under `prefix`. */
function pushConfigField(prefix: string, rest: string): string {
  return `${prefix}${rest.replace(/^\.authentication\.scheme\b/, ".authentication.schemes")}`;
}

/** SendMessageRequest: message → request, parts → content, the inline push config → push_notification. */
export const sendMessageFields: FieldRenaming = (field) => {
  const part = /^message\.parts(\[\d+\])(.*)$/.exec(field);
  if (part) return `request.content${part[1]}${partField(part[2]!)}`;
  if (field === "message.parts") return "request.content";
  if (field === "message" || field.startsWith("message.")) return `request${field.slice("message".length)}`;
  const push = /^configuration\.task_push_notification_config(.*)$/.exec(field);
  if (push) return pushConfigField("configuration.push_notification", push[1]!);
  return field;
};

/** Requests that carry the task in `name` (GetTask, CancelTask, TaskSubscription). */
export const taskNameFields: FieldRenaming = (field) => (field === "id" ? "name" : field);

/** Requests that carry the task in `parent` (List). */
export const taskParentFields: FieldRenaming = (field) => (field === "task_id" ? "parent" : field);

/** Requests that carry task and config in `name` (Get, Delete). */
export const configNameFields: FieldRenaming = (field) => (field === "task_id" || field === "id" ? "name" : field);

/** CreateTaskPushNotificationConfig: the task from `parent`, the rest under config.push_notification_config. */
export const createPushConfigFields: FieldRenaming = (field) => {
  if (field === "task_id") return "parent";
  if (field === "tenant") return field;
  return pushConfigField("config.push_notification_config", `.${field}`);
};

/** Runs a v1.0 call; its INVALID_ARGUMENT comes back with the v0.3 field paths. */
export async function withV03Fields<T>(rename: FieldRenaming, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    throw new InvalidRequestError(
      error.violations.map((v) => ({ field: rename(v.field), description: v.description })),
      error.omitted,
    );
  }
}

import { Role, type Message, type Part, type SendMessageRequest } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import {
  checkAbsoluteUrl,
  checkHistoryLength,
  checkId,
  checkJsonObject,
  checkJsonValue,
  checkMediaRange,
  checkMediaType,
  checkNoControlChars,
} from "./field-checks.js";
import { checkPushConfigShape } from "./push-config-checks.js";
import { DEFAULT_VALIDATION_LIMITS, type ValidationLimits } from "./validation-limits.js";
import { Violations } from "./violations.js";

/**
 * SendMessage / SendStreamingMessage (R-SEND-8, R-HIST-4, A-16). Shape only: whether the
 * referenced task exists, is terminal, or the media types are accepted is decided later.
 */
export function validateSendMessageRequest(req: SendMessageRequest, limits: ValidationLimits = DEFAULT_VALIDATION_LIMITS): void {
  const v = new Violations();
  checkId(v, "tenant", req.tenant, limits);
  if (req.message === undefined) {
    v.add("message", "must be set: the message you are sending to the agent");
  } else {
    checkMessage(v, req.message, limits);
  }
  const config = req.configuration;
  if (config !== undefined) {
    checkHistoryLength(v, "configuration.history_length", config.historyLength);
    config.acceptedOutputModes.forEach((mode, i) => checkMediaRange(v, `configuration.accepted_output_modes[${i}]`, mode));
    if (config.taskPushNotificationConfig !== undefined) {
      checkPushConfigShape(v, "configuration.task_push_notification_config", config.taskPushNotificationConfig, limits);
      // Filled in by the server with the task this call creates or continues (R-SEND-7); a value is still bounded.
      checkId(v, "configuration.task_push_notification_config.task_id", config.taskPushNotificationConfig.taskId, limits);
    }
  }
  checkJsonObject(v, "metadata", req.metadata, limits);
  v.throwIfAny();
}

function checkMessage(v: Violations, message: Message, limits: ValidationLimits): void {
  checkId(v, "message.message_id", message.messageId, limits, "the unique id of this message, chosen by you (a UUID works)");
  // Both are optional: a new conversation leaves them empty and the server assigns them.
  checkId(v, "message.context_id", message.contextId, limits);
  checkId(v, "message.task_id", message.taskId, limits);
  if (message.role !== Role.USER) {
    v.add("message.role", `must be ROLE_USER: clients send messages as the user (got ${roleName(message.role)})`);
  }
  if (message.parts.length === 0) {
    v.add("message.parts", "must contain at least one part (text, raw, url or data)");
  }
  for (let i = 0; i < message.parts.length; i++) checkPart(v, i, message.parts[i]!, limits);
  checkJsonObject(v, "message.metadata", message.metadata, limits);
  message.extensions.forEach((uri, i) => {
    const field = `message.extensions[${i}]`;
    if (uri === "") v.add(field, "must not be empty: list the URI of each extension that contributed to this message");
    else checkNoControlChars(v, field, uri);
  });
  if (message.referenceTaskIds.length > limits.maxReferenceTaskIds) {
    v.add("message.reference_task_ids", `must have at most ${limits.maxReferenceTaskIds} entries (got ${message.referenceTaskIds.length})`);
  }
  message.referenceTaskIds.forEach((id, i) => checkId(v, `message.reference_task_ids[${i}]`, id, limits, "the id of an earlier task; remove empty entries"));
}

function checkPart(v: Violations, index: number, part: Part, limits: ValidationLimits): void {
  const content = part.content;
  // The usual part, plain text or bytes, has nothing more to check: no field names to build.
  if ((content.case === "text" || content.case === "raw") && part.mediaType === "" && part.filename === "" && part.metadata === undefined) return;
  const field = `message.parts[${index}]`;
  switch (content.case) {
    case undefined:
      v.add(field, "must carry content: set one of text, raw, url or data");
      break;
    case "url":
      checkAbsoluteUrl(v, `${field}.url`, content.value);
      break;
    case "data":
      checkJsonValue(v, `${field}.data`, content.value, limits);
      break;
    case "text":
    case "raw":
      break;
  }
  checkMediaType(v, `${field}.media_type`, part.mediaType);
  checkNoControlChars(v, `${field}.filename`, part.filename);
  if (part.filename.length > limits.maxFilenameLength) {
    v.add(`${field}.filename`, `must be at most ${limits.maxFilenameLength} characters long (got ${part.filename.length})`);
  }
  checkJsonObject(v, `${field}.metadata`, part.metadata, limits);
}

function roleName(role: number): string {
  const name = Role[role];
  return name === undefined ? `unknown value ${role}` : `ROLE_${name}`;
}

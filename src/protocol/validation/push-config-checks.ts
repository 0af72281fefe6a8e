import type { TaskPushNotificationConfig } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { checkId, checkNoControlChars, checkWebhookUrl } from "./field-checks.js";
import type { ValidationLimits } from "./validation-limits.js";
import type { Violations } from "./violations.js";

// RFC 9110 token: what may stand before the credentials in an Authorization header.
const AUTH_SCHEME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The shape of a push config, wherever it appears (Create, or inline in SendMessage's
 * configuration). `prefix` is the path of the config in the request ("" at the top level).
 * Whether the task exists and push is enabled is decided later.
 */
export function checkPushConfigShape(v: Violations, prefix: string, config: TaskPushNotificationConfig, limits: ValidationLimits): void {
  const at = (name: string) => (prefix === "" ? name : `${prefix}.${name}`);
  checkWebhookUrl(v, at("url"), config.url);
  checkId(v, at("id"), config.id, limits);
  checkId(v, at("tenant"), config.tenant, limits);
  // The token and credentials travel in HTTP headers of the webhook call: no control
  // characters (header injection), and a size a receiver's header limit takes.
  checkNoControlChars(v, at("token"), config.token);
  checkHeaderLength(v, at("token"), config.token);
  const auth = config.authentication;
  if (auth !== undefined) {
    if (auth.scheme === "") {
      v.add(at("authentication.scheme"), "must be set when authentication is given: the HTTP auth scheme, such as Bearer or Basic");
    } else if (!AUTH_SCHEME.test(auth.scheme)) {
      v.add(at("authentication.scheme"), "must be a single HTTP auth scheme name, such as Bearer or Basic (no spaces)");
    }
    checkNoControlChars(v, at("authentication.credentials"), auth.credentials);
    checkHeaderLength(v, at("authentication.credentials"), auth.credentials);
  }
}

const MAX_HEADER_VALUE = 4096;

function checkHeaderLength(v: Violations, field: string, value: string): void {
  if (value.length > MAX_HEADER_VALUE) v.add(field, `must be at most ${MAX_HEADER_VALUE} characters (it is sent as an HTTP header)`);
}

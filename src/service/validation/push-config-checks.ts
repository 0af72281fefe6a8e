import type { TaskPushNotificationConfig } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { checkId, checkWebhookUrl } from "./field-checks.js";
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
  // The token and credentials travel in HTTP headers of the webhook call: refused here what
  // no header can carry as it is (issue 33 finding 9), and a size a receiver's header limit takes.
  checkHeaderValue(v, at("token"), config.token);
  const auth = config.authentication;
  if (auth !== undefined) {
    if (auth.scheme === "") {
      v.add(at("authentication.scheme"), "must be set when authentication is given: the HTTP auth scheme, such as Bearer or Basic");
    } else if (!AUTH_SCHEME.test(auth.scheme)) {
      v.add(at("authentication.scheme"), "must be a single HTTP auth scheme name, such as Bearer or Basic (no spaces)");
    }
    checkHeaderValue(v, at("authentication.credentials"), auth.credentials);
  }
}

const MAX_HEADER_VALUE = 4096;
// Control characters: CR and LF (header injection), NUL, and the rest of C0, DEL and C1.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// Past Latin-1 a character has no single byte on the wire: clients refuse or mangle it.
const BEYOND_LATIN1 = /[^\u0000-\u00ff]/;

/**
 * A value sent as an HTTP header value must arrive as it was stored: no control characters, only
 * Latin-1, no space or tab at either end (parsers strip them), and a size receivers accept.
 */
function checkHeaderValue(v: Violations, field: string, value: string): void {
  if (CONTROL.test(value)) v.add(field, "must not contain control characters such as CR, LF or NUL (it is sent as an HTTP header)");
  else if (BEYOND_LATIN1.test(value)) v.add(field, "must contain only Latin-1 characters, such as ASCII (it is sent as an HTTP header)");
  else if (/^[ \t]|[ \t]$/.test(value)) v.add(field, "must not begin or end with a space (it is sent as an HTTP header, which drops them)");
  else if (value.length > MAX_HEADER_VALUE) v.add(field, `must be at most ${MAX_HEADER_VALUE} characters (it is sent as an HTTP header)`);
}

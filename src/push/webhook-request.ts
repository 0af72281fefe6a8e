import type { TaskPushNotificationConfig } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { OutboxEntry } from "./ports/push-outbox.js";
import { signatureHeaders, type WebhookSigner } from "./signature.js";
import type { WebhookPayload } from "./webhook-payload.js";
import type { WebhookRequest } from "./webhook-sender.js";

/**
 * The request for one event to one config (A-9, A-29, R-V03-71 for configs of v0.3 calls): the config's credentials in
 * `Authorization`, its token in `X-A2A-Notification-Token`, and the Standard Webhooks headers.
 * The webhook id names the outbox entry, so it is the same on every attempt and after a restart.
 * `extra`: headers of observers (tracing's `traceparent`), never overriding these.
 */
export function webhookRequest(
  config: TaskPushNotificationConfig,
  entry: OutboxEntry,
  { body, contentType }: WebhookPayload,
  signer: WebhookSigner | undefined,
  nowMs: number,
  extra?: Readonly<Record<string, string>>,
): WebhookRequest {
  const headers: Record<string, string> = {
    ...extra,
    "content-type": contentType,
    "user-agent": "a2a-grpc-server",
    ...signatureHeaders(`msg_${entry.seq}_${entry.taskId}`, Math.floor(nowMs / 1000), body, signer, entry.scope.tenant),
  };
  const auth = config.authentication;
  if (auth !== undefined && auth.scheme !== "") headers.authorization = auth.credentials === "" ? auth.scheme : `${auth.scheme} ${auth.credentials}`;
  if (config.token !== "") headers["x-a2a-notification-token"] = config.token;
  return { url: config.url, headers, body };
}

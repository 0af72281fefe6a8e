import type { TaskPushNotificationConfig } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { OutboxEntry } from "./ports/push-outbox.js";
import { WEBHOOK_CONTENT_TYPE } from "./body-encoding.js";
import { signatureHeaders, type WebhookSigner } from "./signature.js";
import type { WebhookRequest } from "./webhook-sender.js";

/**
 * The request for one event to one config: the config's credentials in
 * `Authorization`, its token in `X-A2A-Notification-Token`, and the Standard Webhooks headers.
 * The webhook id names the outbox entry, so it is the same on every attempt and after a restart.
 * `extra`: headers of observers (tracing's `traceparent`), never overriding these.
 */
export function webhookRequest(
  config: TaskPushNotificationConfig,
  entry: OutboxEntry,
  body: string,
  signer: WebhookSigner | undefined,
  nowMs: number,
  extra?: Readonly<Record<string, string>>,
): WebhookRequest {
  const headers: Record<string, string> = {
    ...extra,
    "content-type": WEBHOOK_CONTENT_TYPE,
    "user-agent": "a2a-grpc-server",
    ...signatureHeaders(`msg_${entry.seq}_${entry.taskId}`, Math.floor(nowMs / 1000), body, signer, entry.scope.tenant),
  };
  const auth = config.authentication;
  if (auth !== undefined && auth.scheme !== "") headers.authorization = auth.credentials === "" ? auth.scheme : `${auth.scheme} ${auth.credentials}`;
  if (config.token !== "") headers["x-a2a-notification-token"] = config.token;
  return { url: config.url, headers, body };
}

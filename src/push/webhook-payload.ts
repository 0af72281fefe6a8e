import { WEBHOOK_CONTENT_TYPE, webhookBody } from "./body-encoding.js";
import type { PushProtocolVersion } from "./ports/push-config-store.js";
import type { OutboxEntry } from "./ports/push-outbox.js";
import type { WebhookBodyEncoders } from "./ports/webhook-body.js";

/** A webhook's body and its media type. */
export interface WebhookPayload {
  readonly body: string;
  readonly contentType: string;
}

/**
 * The body a config gets for an entry, by the generation of the call that made the config
 * (R-V03-70/71): 1.0 configs the StreamResponse of A-9 (the store's body when it made one with
 * the entry), the others their generation's encoder; 1.0's when the app gave none.
 */
export function webhookPayload(
  entry: OutboxEntry,
  version: PushProtocolVersion,
  encoders: WebhookBodyEncoders | undefined,
): WebhookPayload | Promise<WebhookPayload> {
  const encoder = version === "1.0" ? undefined : encoders?.[version];
  // Within the call for 1.0 (the common case: no promise per delivery); throws where webhookBody does.
  if (encoder === undefined) return { body: entry.body ?? webhookBody(entry.event), contentType: WEBHOOK_CONTENT_TYPE };
  return encoder.encode(entry).then((body) => ({ body, contentType: encoder.contentType }));
}

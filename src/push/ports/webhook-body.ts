import type { PushProtocolVersion } from "./push-config-store.js";
import type { OutboxEntry } from "./push-outbox.js";

/**
 * The webhook body for configs made by calls of another A2A generation than 1.0 (R-V03-71): the
 * app injects one per generation it serves (the v0.3 one: src/v03/push), so this folder knows
 * no generation but its own (A-9's StreamResponse, body-encoding.ts).
 */
export interface WebhookBodyEncoder {
  /** The request's Content-Type. */
  readonly contentType: string;
  /** The body for one outbox entry (its event: a StreamResponse in protobuf binary). Never rejects. */
  encode(entry: OutboxEntry): Promise<string>;
}

export type WebhookBodyEncoders = Readonly<Partial<Record<Exclude<PushProtocolVersion, "1.0">, WebhookBodyEncoder>>>;

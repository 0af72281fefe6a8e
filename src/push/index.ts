/**
 * Push notification delivery (R-PUSHD, A-9..A-12, A-28, A-29): what the app wires when push is
 * on. One file per policy: the destination guard, the retry schedule, the signature, the body
 * encoding; the sender (undici, pinned to vetted addresses) and the service that drains the
 * outbox the stores write.
 */
import type { PushSettings } from "./push-config.js";
import type { CoreLogger } from "../lifecycle/index.js";
import type { PushConfigStore } from "./ports/push-config-store.js";
import type { PushOutbox } from "./ports/push-outbox.js";
import type { WebhookBodyEncoders } from "./ports/webhook-body.js";
import { DestinationGuard, type Resolver } from "./destination-guard.js";
import { PushService } from "./push-service.js";
import type { WebhookSigner } from "./signature.js";
import { WebhookSender } from "./webhook-sender.js";

export { DestinationGuard, DestinationRefusedError, systemResolver, type Resolver, type ResolvedAddress } from "./destination-guard.js";
export { DELIVERY_CHANNEL, PushService, type DeliveryOutcome } from "./push-service.js";
export { WebhookSender } from "./webhook-sender.js";
export { createWebhookSigner } from "./signing-key.js";
export { pushSignatureDeclaration, PUSH_SIGNATURE_EXTENSION } from "./signing-extension.js";
export type { WebhookBodyEncoder, WebhookBodyEncoders } from "./ports/webhook-body.js";

export interface PushDelivery {
  readonly guard: DestinationGuard;
  readonly service: PushService;
  start(): Promise<void>;
  close(): Promise<void>;
}

export function createPushDelivery(options: {
  readonly store: PushConfigStore & PushOutbox;
  readonly settings: PushSettings;
  readonly logger: CoreLogger;
  readonly resolver?: Resolver;
  /** Signs every webhook (createWebhookSigner); undefined = unsigned. */
  readonly signer?: WebhookSigner;
  /** Bodies for configs made by calls of another generation than 1.0 (R-V03-71). */
  readonly bodyEncoders?: WebhookBodyEncoders;
}): PushDelivery {
  const { settings } = options;
  const guard = new DestinationGuard({ allowHosts: settings.allowHosts, allowHttp: settings.allowHttp }, options.resolver);
  const sender = new WebhookSender({ guard, timeoutMs: settings.timeoutMs });
  const service = new PushService({
    outbox: options.store,
    configs: options.store,
    sender,
    retry: { maxAttempts: settings.maxAttempts, backoffMs: settings.backoffMs, maxBackoffMs: settings.maxBackoffMs, maxAgeMs: settings.maxAgeMs },
    concurrency: settings.concurrency,
    concurrencyPerHost: settings.concurrencyPerHost,
    signer: options.signer,
    bodyEncoders: options.bodyEncoders,
    logger: options.logger,
  });
  return {
    guard,
    service,
    start: () => service.start(),
    async close() {
      service.stop();
      await sender.close();
    },
  };
}

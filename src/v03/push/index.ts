/** Webhooks for push configs made by v0.3 calls (R-V03-70/71): the encoder the app gives push delivery. */
export { V03_WEBHOOK_CONTENT_TYPE, v03WebhookBody } from "./v03-webhook-body.js";

import { create } from "@bufbuild/protobuf";
import { AgentExtensionSchema, type AgentExtension } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { Ed25519Signer, type WebhookSigner } from "./signature.js";

/** The card extension that publishes how webhooks are signed, and the key to verify them with (issue 33 finding 5). */
export const PUSH_SIGNATURE_EXTENSION = "urn:a2a-grpc-server:extension:push-signature:v1";

/** The card's declaration of the webhook signature: scheme, and for Ed25519 the public key. */
export function pushSignatureDeclaration(signer: WebhookSigner): AgentExtension {
  const ed25519 = signer instanceof Ed25519Signer;
  return create(AgentExtensionSchema, {
    uri: PUSH_SIGNATURE_EXTENSION,
    description: ed25519
      ? "Push notifications carry Standard Webhooks headers; webhook-signature is v1a: base64 Ed25519 over <webhook-id>.<webhook-timestamp>.<body>, verified with public_key (whpk_ + base64 of the raw key) or public_key_pem."
      : "Push notifications carry Standard Webhooks headers; webhook-signature is v1: base64 HMAC-SHA256 over <webhook-id>.<webhook-timestamp>.<body> with your tenant's secret (ask the operator).",
    required: false,
    params: ed25519 ? { scheme: "v1a", algorithm: "Ed25519", public_key: signer.publicKey, public_key_pem: signer.publicKeyPem } : { scheme: "v1" },
  });
}

// A webhook receiver for this server's push notifications: checks the Standard Webhooks
// signature, refuses stale or replayed deliveries, and prints each event.
//   A2A_PUSH_PUBLIC_KEY=whpk_... PORT=9000 node examples/push-receiver.mjs      (Ed25519, v1a: the default;
//     the server's public key, from its card: `a2a push public-key`)
//   A2A_PUSH_SIGNING_SECRET=whsec_... PORT=9000 node examples/push-receiver.mjs  (HMAC, v1: your tenant's
//     secret, from the operator: `a2a-grpc-server push tenant-secret --tenant=NAME`)
import { createHmac, createPublicKey, timingSafeEqual, verify } from "node:crypto";
import { createServer } from "node:http";

const publicKey = process.env.A2A_PUSH_PUBLIC_KEY ?? "";
const secret = process.env.A2A_PUSH_SIGNING_SECRET ?? "";
if (!publicKey.startsWith("whpk_") && !secret.startsWith("whsec_")) {
  throw new Error("set A2A_PUSH_PUBLIC_KEY to the server's whpk_... key, or A2A_PUSH_SIGNING_SECRET to your tenant's whsec_... secret");
}
const ed25519 = publicKey.startsWith("whpk_")
  ? createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKey.slice(5), "base64").toString("base64url") }, format: "jwk" })
  : undefined;
const key = Buffer.from(secret.slice("whsec_".length), "base64");
const seen = new Set(); // webhook-ids already handled: a retry of a delivered event is acknowledged, not handled twice

function verified(headers, body) {
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const signatures = String(headers["webhook-signature"] ?? "").split(" ");
  if (!id || !timestamp || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const signed = Buffer.from(`${id}.${timestamp}.${body}`);
  if (ed25519 !== undefined) {
    return signatures.some((s) => s.startsWith("v1a,") && verify(null, signed, ed25519, Buffer.from(s.slice(4), "base64")));
  }
  const expected = Buffer.from(`v1,${createHmac("sha256", key).update(signed).digest("base64")}`);
  return signatures.some((s) => s.length === expected.length && timingSafeEqual(Buffer.from(s), expected));
}

const server = createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    if (req.method !== "POST" || !verified(req.headers, body)) {
      res.writeHead(401).end();
      return;
    }
    const id = req.headers["webhook-id"];
    if (!seen.has(id)) {
      seen.add(id);
      const event = JSON.parse(body); // a StreamResponse: task, statusUpdate or artifactUpdate
      console.log(JSON.stringify({ id, token: req.headers["x-a2a-notification-token"] ?? null, event }));
    }
    res.writeHead(204).end();
  });
});
server.listen(Number(process.env.PORT ?? 9000), "127.0.0.1", () => console.error(`listening on 127.0.0.1:${server.address().port}`));

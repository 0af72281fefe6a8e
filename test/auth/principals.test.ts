/**
 * Issue 33, finding 9 (principals): a credential that names no usable principal is refused,
 * UNAUTHENTICATED naming what is wrong: a JWT whose `sub` is empty or blank, a client
 * certificate whose name holds control characters.
 */
import * as grpc from "@grpc/grpc-js";
import type { PeerCertificate } from "node:tls";
import { AuthError } from "../../src/auth/index.js";
import { MtlsAuthenticator } from "../../src/auth/mtls-authenticator.js";
import { rpc, scriptedAgent, sendRequest, userMessage } from "../e2e/e2e-helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { bearer, expectAuthError, makeIssuer, type TestIssuer } from "./auth-support.js";

describe("JWT sub (issue 33 #9)", () => {
  let issuer: TestIssuer;
  let s: A2ATestServer;
  beforeAll(async () => {
    issuer = await makeIssuer();
    s = await startA2AServer({ agent: scriptedAgent(async (ctx) => ctx.complete("ok")), env: issuer.env() });
  });
  afterAll(async () => {
    await s.close();
    issuer.remove();
  });

  test.each([
    ["empty", ""],
    ["blank", "   "],
  ])("A-30: a token whose sub is %s is UNAUTHENTICATED naming the sub claim", async (_what, sub) => {
    const { error } = await rpc(s).send(sendRequest(userMessage("hi")), bearer(await issuer.token({ sub })));
    expectAuthError(error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_INVALID", /sub claim is empty/);
  });

  test("A-30: a token with a real sub still passes", async () => {
    const { error } = await rpc(s).send(sendRequest(userMessage("hi")), bearer(await issuer.token({ sub: "alice" })));
    expect(error).toBeUndefined();
  });
});

describe("mTLS names (issue 33 #9)", () => {
  /** What the TLS layer reports of a client certificate it verified (outside the system: Node's TLS). */
  const presenting = (cert: Partial<PeerCertificate>) => ({
    metadata: new grpc.Metadata(),
    getAuthContext: () => ({ sslPeerCertificate: cert as PeerCertificate }),
  });
  const refusal = (authenticator: MtlsAuthenticator, cert: Partial<PeerCertificate>): AuthError | undefined => {
    try {
      authenticator.authenticate(presenting(cert));
      return undefined;
    } catch (error) {
      return error as AuthError;
    }
  };

  test.each([
    ["a newline", "ops\nadmin"],
    ["a NUL", "ops\u0000"],
    ["an escape sequence", "ops\u001b[2J"],
    ["a C1 control", "ops\u0085admin"],
    ["only blanks", "   "],
  ])("A-30: a subject CN with %s is refused, UNAUTHENTICATED", (_what, cn) => {
    const error = refusal(new MtlsAuthenticator("subject"), { subject: { CN: cn } as never });
    expect(error).toBeInstanceOf(AuthError);
    expect({ kind: error!.kind, reason: error!.reason }).toEqual({ kind: "unauthenticated", reason: "CREDENTIALS_INVALID" });
    expect(error!.message).toMatch(/subject CN is blank or holds control characters/);
    expect(error!.message).not.toContain(cn);
  });

  test("A-30: a SAN with control characters is refused too", () => {
    const error = refusal(new MtlsAuthenticator("san"), { subjectaltname: "URI:spiffe://acme/ops\r\nX-Injected: 1" });
    expect(error?.reason).toBe("CREDENTIALS_INVALID");
  });

  test("A-30: a printable name is the principal", () => {
    const identity = new MtlsAuthenticator("subject").authenticate(presenting({ subject: { CN: "a2a test client" } as never }));
    expect(identity?.principal).toBe("a2a test client");
  });
});

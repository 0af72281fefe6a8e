/**
 * Health and reflection with authentication on (A2A_AUTH_OPEN_SERVICES, issue #18 item 3): open by
 * default (Kubernetes gRPC probes carry no credentials), and when the operator closes them, the
 * same A-15 refusals as the A2A RPCs: UNAUTHENTICATED without or with a bad credential,
 * PERMISSION_DENIED without the scope mapped to the service. Driven through the ts-proto health
 * client, a raw grpc-js reflection client and the `a2a health` CLI.
 */
import * as grpc from "@grpc/grpc-js";
import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";
import { HealthCheckResponse_ServingStatus, HealthClient, type HealthCheckResponse } from "../../gen/ts-proto/grpc/health/v1/health.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { a2a } from "../cli/cli-helpers.js";
import { captureLogger } from "../foundation/helpers.js";
import { loadConfig } from "../../src/config/index.js";
import { startServer } from "../../src/protocol/server.js";
import { expectAuthError, makeIssuer, type TestIssuer } from "./auth-support.js";

let issuer: TestIssuer;
beforeAll(async () => {
  issuer = await makeIssuer("ES256");
});
afterAll(() => issuer.remove());

function credentials(token?: string): grpc.Metadata {
  const md = new grpc.Metadata();
  if (token !== undefined) md.set("authorization", `Bearer ${token}`);
  return md;
}

function healthCheck(s: A2ATestServer, md: grpc.Metadata): Promise<{ status?: HealthCheckResponse_ServingStatus; error?: grpc.ServiceError }> {
  const client = new HealthClient(s.target, grpc.credentials.createInsecure());
  return new Promise((resolve) =>
    client.check({ service: "lf.a2a.v1.A2AService" }, md, (error: grpc.ServiceError | null, response: HealthCheckResponse) => {
      client.close();
      resolve(error ? { error } : { status: response.status });
    }),
  );
}

/** The first answer of a health Watch stream: a status, or the error the stream ended with. */
function healthWatch(s: A2ATestServer, md: grpc.Metadata): Promise<{ status?: HealthCheckResponse_ServingStatus; error?: grpc.ServiceError }> {
  const client = new HealthClient(s.target, grpc.credentials.createInsecure());
  const call = client.watch({ service: "" }, md);
  return new Promise((resolve) => {
    call.once("data", (r: HealthCheckResponse) => {
      call.cancel();
      resolve({ status: r.status });
    });
    call.once("error", (error: grpc.ServiceError) => resolve(error.code === grpc.status.CANCELLED ? {} : { error }));
  }).finally(() => client.close()) as Promise<{ status?: HealthCheckResponse_ServingStatus; error?: grpc.ServiceError }>;
}

/** grpc.reflection.v1 list_services through a raw grpc-js bidi call: the service names, or the error. */
function listServices(s: A2ATestServer, md: grpc.Metadata, version: "v1" | "v1alpha" = "v1"): Promise<{ services?: string[]; error?: grpc.ServiceError }> {
  const client = new grpc.Client(s.target, grpc.credentials.createInsecure());
  const call = client.makeBidiStreamRequest(
    `/grpc.reflection.${version}.ServerReflection/ServerReflectionInfo`,
    (b: Buffer) => b,
    (b: Buffer) => b,
    md,
  );
  const answer = new Promise<{ services?: string[]; error?: grpc.ServiceError }>((resolve) => {
    call.once("data", (bytes: Buffer) => resolve({ services: decodeServices(bytes) }));
    call.once("error", (error: grpc.ServiceError) => resolve({ error }));
  });
  call.write(Buffer.from(new BinaryWriter().tag(7, 2).string("*").finish())); // list_services
  call.end();
  return answer.finally(() => client.close());
}

function decodeServices(bytes: Buffer): string[] {
  const names: string[] = [];
  const r = new BinaryReader(bytes);
  while (r.pos < r.len) {
    const [field, wire] = r.tag();
    if (field !== 6) {
      r.skip(wire);
      continue;
    }
    const list = new BinaryReader(r.bytes());
    while (list.pos < list.len) {
      const [f, w] = list.tag();
      if (f !== 1) {
        list.skip(w);
        continue;
      }
      const svc = new BinaryReader(list.bytes());
      while (svc.pos < svc.len) {
        const [sf, sw] = svc.tag();
        if (sf === 1) names.push(svc.string());
        else svc.skip(sw);
      }
    }
  }
  return names.sort();
}

const SERVICES = ["grpc.health.v1.Health", "lf.a2a.v1.A2AService"];

describe("A2A_AUTH_OPEN_SERVICES unset (default health,reflection): both answer without credentials", () => {
  let s: A2ATestServer;
  beforeAll(async () => {
    s = await startA2AServer({ env: issuer.env() });
  });
  afterAll(() => s.close());

  test("A-30: health Check and Watch answer an anonymous caller (what a Kubernetes gRPC probe is)", async () => {
    expect(await healthCheck(s, credentials())).toEqual({ status: HealthCheckResponse_ServingStatus.SERVING });
    expect(await healthWatch(s, credentials())).toEqual({ status: HealthCheckResponse_ServingStatus.SERVING });
  });

  test("A-30: reflection lists the services to an anonymous caller, while an A2A RPC without a token is UNAUTHENTICATED", async () => {
    expect(await listServices(s, credentials())).toEqual({ services: SERVICES });
    const sent = await new Promise<grpc.ServiceError | null>((resolve) => s.client.getExtendedAgentCard({ tenant: "" }, s.metadata(), (e) => resolve(e)));
    expect(sent?.code).toBe(grpc.status.UNAUTHENTICATED);
  });
});

describe("A2A_AUTH_OPEN_SERVICES=none: health and reflection need a credential like the A2A RPCs (A-15)", () => {
  let s: A2ATestServer;
  beforeAll(async () => {
    s = await startA2AServer({ env: issuer.env({ A2A_AUTH_OPEN_SERVICES: "none", A2A_AUTH_SCOPES: "health=ops.health,reflection=ops.reflect" }) });
  });
  afterAll(() => s.close());

  test("A-15: no credential is UNAUTHENTICATED / CREDENTIALS_MISSING on health Check, health Watch and reflection (v1 and v1alpha)", async () => {
    for (const answer of [
      await healthCheck(s, credentials()),
      await healthWatch(s, credentials()),
      await listServices(s, credentials()),
      await listServices(s, credentials(), "v1alpha"),
    ]) {
      expectAuthError(answer.error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_MISSING", /authorization: Bearer <JWT>/);
    }
  });

  test("A-15: an expired token and one signed by another key are UNAUTHENTICATED / CREDENTIALS_INVALID", async () => {
    const expired = await issuer.token({ scope: "ops.health" }, { expiresIn: Math.floor(Date.now() / 1000) - 120 });
    expectAuthError((await healthCheck(s, credentials(expired))).error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_INVALID", /expired/);
    const other = await makeIssuer("ES256");
    const forged = await other.token({ scope: "ops.reflect" });
    other.remove();
    expectAuthError((await listServices(s, credentials(forged))).error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_INVALID", /signature/);
  });

  test("A-15: a valid token without the scope mapped to the service is PERMISSION_DENIED / SCOPE_MISSING naming it", async () => {
    const reflectOnly = await issuer.token({ scope: "ops.reflect" });
    expectAuthError(
      (await healthCheck(s, credentials(reflectOnly))).error,
      grpc.status.PERMISSION_DENIED,
      "SCOPE_MISSING",
      /health needs the scope\(s\) ops\.health/,
    );
    const healthOnly = await issuer.token({ scope: "ops.health" });
    expectAuthError(
      (await listServices(s, credentials(healthOnly))).error,
      grpc.status.PERMISSION_DENIED,
      "SCOPE_MISSING",
      /reflection needs the scope\(s\) ops\.reflect/,
    );
  });

  test("A-30: a valid token with the scope gets the service's answer: SERVING, the service list", async () => {
    const token = await issuer.token({ scope: "ops.health ops.reflect" });
    expect(await healthCheck(s, credentials(token))).toEqual({ status: HealthCheckResponse_ServingStatus.SERVING });
    expect(await healthWatch(s, credentials(token))).toEqual({ status: HealthCheckResponse_ServingStatus.SERVING });
    expect(await listServices(s, credentials(token))).toEqual({ services: SERVICES });
  });

  test("A-15: `a2a health` (the CLI) is refused without --token (exit 1, the reason printed) and reports SERVING with one", async () => {
    const refused = await a2a(["health", "--server", s.target, "--human"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/CREDENTIALS_MISSING/);
    const token = await issuer.token({ scope: "ops.health" });
    const served = await a2a(["health", "--server", s.target, "--human", "--token", token]);
    expect({ code: served.code, stdout: served.stdout }).toEqual({ code: 0, stdout: "lf.a2a.v1.A2AService: SERVING\n" });
  });

  test("refusals of reflection are on the RPC log, credentials never", async () => {
    const token = await issuer.token({ scope: "ops.health" });
    await listServices(s, credentials(token));
    const line = s.lines.filter((l) => l["method"] === "ServerReflectionInfo" && l["grpc_status"] === "PERMISSION_DENIED").at(-1);
    expect(line).toMatchObject({ service: "grpc.reflection.v1.ServerReflection", details: expect.stringMatching(/reflection needs/) });
    expect(JSON.stringify(s.lines)).not.toContain(token);
  });
});

describe("A2A_AUTH_OPEN_SERVICES=health: health stays open, reflection needs a credential", () => {
  let s: A2ATestServer;
  beforeAll(async () => {
    s = await startA2AServer({ env: issuer.env({ A2A_AUTH_OPEN_SERVICES: "health" }) });
  });
  afterAll(() => s.close());

  test("A-30: anonymous health is SERVING; anonymous reflection is UNAUTHENTICATED; with any valid token (no scope table) it lists", async () => {
    expect(await healthCheck(s, credentials())).toEqual({ status: HealthCheckResponse_ServingStatus.SERVING });
    expectAuthError((await listServices(s, credentials())).error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_MISSING", /Bearer/);
    expect(await listServices(s, credentials(await issuer.token()))).toEqual({ services: SERVICES });
  });
});

describe("A2A_AUTH_OPEN_SERVICES, read and enforced from the start", () => {
  const env = (extra: Record<string, string>) => ({ A2A_LISTEN: "127.0.0.1:0", A2A_STORE: "memory", ...issuer.env(), ...extra });

  test("the setting's words: a comma list of health and reflection, or none; anything else is a configuration error naming it", () => {
    const guarded = (value?: string) => loadConfig({ argv: [], env: env(value === undefined ? {} : { A2A_AUTH_OPEN_SERVICES: value }) }).auth.guardedServices;
    expect(guarded()).toEqual([]);
    expect(guarded("none")).toEqual(["health", "reflection"]);
    expect(guarded("Reflection")).toEqual(["health"]);
    expect(guarded("health, reflection")).toEqual([]);
    expect(() => guarded("health,metrics")).toThrow(/A2A_AUTH_OPEN_SERVICES \(--auth-open-services\) = "health,metrics": expected none, or health, reflection/);
    // Without authentication nothing can be checked: every service stays open.
    expect(loadConfig({ argv: [], env: { A2A_LISTEN: "127.0.0.1:0", A2A_AUTH_OPEN_SERVICES: "none" } }).auth.guardedServices).toEqual([]);
  });

  test("a closed health service is UNAVAILABLE until the app has installed its guard (never open while starting)", async () => {
    const { logger } = captureLogger("silent");
    const server = await startServer({ listen: "127.0.0.1:0", logger, guardedServices: ["health"] });
    const client = new HealthClient(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
    const check = () =>
      new Promise<grpc.ServiceError | null>((resolve) => client.check({ service: "" }, credentials(), (error: grpc.ServiceError | null) => resolve(error)));
    try {
      expect((await check())?.code).toBe(grpc.status.UNAVAILABLE);
      server.guardServices(() => ({ principal: "ops" }));
      expect(await check()).toBeNull();
    } finally {
      client.close();
      await server.shutdown(0);
    }
  });
});

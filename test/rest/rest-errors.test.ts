/**
 * Issue 34 item 3: every row of the R-BIND-38 error table over HTTP+JSON, as §11.6 bodies
 * (`{"error":{code, status, message, details}}` in application/a2a+json) with the HTTP status
 * of the row, through raw HTTP requests; the rows no request can reach on a running test server
 * (shutdown, deadline, an unexpected fault) through the binding's own mapping.
 */
import { create } from "@bufbuild/protobuf";
import { AgentExtensionSchema } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { AuthError } from "../../src/auth/auth-error.js";
import { ExtendedAgentCardNotConfiguredError, LimitExceededError } from "../../src/lifecycle/model/errors.js";
import { restFailure } from "../../src/rest/index.js";
import { StatusError, toErrorStatus } from "../../src/service/error-status.js";
import { Code } from "../../src/service/status-code.js";
import { message, reasonOf, startRestSetup, violatedFields, type RestAnswer, type RestSetup } from "./rest-support.js";

let s: RestSetup;
/** Push notifications off, an extension clients must activate, no extended card, text parts only, a low request rate. */
let plain: RestSetup;
beforeAll(async () => {
  s = await startRestSetup();
  plain = await startRestSetup(
    { A2A_PUSH_NOTIFICATIONS: "false", A2A_LIMIT_RATE: "1", A2A_LIMIT_BURST: "20" },
    {
      extendedCard: undefined,
      acceptedInputMediaTypes: ["text/plain"],
      extensions: [create(AgentExtensionSchema, { uri: "urn:test:required", required: true })],
    },
  );
});
afterAll(async () => {
  await s?.close();
  await plain?.close();
});

const REQUIRED = { "A2A-Extensions": "urn:test:required" };

async function finishedTask(setup: RestSetup): Promise<string> {
  const sent = await setup.call("POST", "/message:send", message("story"));
  return (sent.body["task"] as { id: string }).id;
}

/** The row's HTTP status, error.code, error.status and ErrorInfo reason. */
const row = (answer: RestAnswer) => [answer.status, answer.body.error?.code, answer.body.error?.status, reasonOf(answer)];

describe("R-BIND-38, R-HTTP-8..10: every row of the table, with ErrorInfo in error.details", () => {
  test("R-HTTP-8, R-HTTP-9: 404 NOT_FOUND TASK_NOT_FOUND, the whole §11.6 body in application/a2a+json", async () => {
    const answer = await s.call("GET", "/tasks/no-such-task");
    expect(answer.headers.get("content-type")).toBe("application/a2a+json");
    expect(answer.headers.get("cache-control")).toBe("no-store");
    expect(answer.body).toEqual({
      error: {
        code: 404,
        status: "NOT_FOUND",
        message: expect.any(String),
        details: [
          {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            reason: "TASK_NOT_FOUND",
            domain: "a2a-protocol.org",
            metadata: { task_id: "no-such-task" },
          },
        ],
      },
    });
  });

  test("400 FAILED_PRECONDITION TASK_NOT_CANCELABLE", async () => {
    const answer = await s.call("POST", `/tasks/${await finishedTask(s)}:cancel`);
    expect(row(answer)).toEqual([400, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"]);
  });

  test("400 FAILED_PRECONDITION PUSH_NOTIFICATION_NOT_SUPPORTED", async () => {
    const answer = await plain.call("POST", "/tasks/t/pushNotificationConfigs", { url: "http://127.0.0.1:9/x" }, REQUIRED);
    expect(row(answer)).toEqual([400, 400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED"]);
  });

  test("400 FAILED_PRECONDITION UNSUPPORTED_OPERATION: subscribe to a terminal task, an ordinary response before any SSE byte (R-HTTP-15)", async () => {
    const answer = await s.call("GET", `/tasks/${await finishedTask(s)}:subscribe`);
    expect(answer.headers.get("content-type")).toBe("application/a2a+json");
    expect(row(answer)).toEqual([400, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION"]);
  });

  test("400 INVALID_ARGUMENT CONTENT_TYPE_NOT_SUPPORTED (a message part's media type)", async () => {
    const body = { message: { messageId: "m1", role: "ROLE_USER", parts: [{ raw: "iVA=", mediaType: "image/png" }] } };
    const answer = await plain.call("POST", "/message:send", body, REQUIRED);
    expect(row(answer)).toEqual([400, 400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED"]);
  });

  test("500 INTERNAL INVALID_AGENT_RESPONSE", async () => {
    s.scripts.set("say nothing", async () => {});
    const answer = await s.call("POST", "/message:send", message("say nothing"));
    expect(row(answer)).toEqual([500, 500, "INTERNAL", "INVALID_AGENT_RESPONSE"]);
  });

  test("400 FAILED_PRECONDITION EXTENDED_AGENT_CARD_NOT_CONFIGURED (mapping), and UNSUPPORTED_OPERATION without the capability", async () => {
    const failure = restFailure(toErrorStatus(new ExtendedAgentCardNotConfiguredError(), () => undefined));
    expect([failure.httpStatus, failure.body.error.status, failure.body.error.details[0]]).toEqual([
      400,
      "FAILED_PRECONDITION",
      expect.objectContaining({ reason: "EXTENDED_AGENT_CARD_NOT_CONFIGURED" }),
    ]);
    const answer = await plain.call("GET", "/extendedAgentCard", undefined, REQUIRED);
    expect(row(answer)).toEqual([400, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION"]);
  });

  test("400 FAILED_PRECONDITION EXTENSION_SUPPORT_REQUIRED", async () => {
    const answer = await plain.call("GET", "/tasks/t");
    expect(row(answer)).toEqual([400, 400, "FAILED_PRECONDITION", "EXTENSION_SUPPORT_REQUIRED"]);
  });

  test("400 FAILED_PRECONDITION VERSION_NOT_SUPPORTED naming the header, with supported_versions (A-3, R-BIND-13)", async () => {
    const answer = await s.call("GET", "/tasks/t", undefined, { "A2A-Version": "" });
    expect(row(answer)).toEqual([400, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"]);
    expect(answer.body.error?.message).toMatch(/a2a-version/i);
    expect(answer.body.error?.details[0]).toEqual(expect.objectContaining({ metadata: expect.objectContaining({ supported_versions: "1.0" }) }));
  });

  test("R-BIND-11, BQ-6: ?A2A-Version= stands in for a missing header; the header wins when both are sent", async () => {
    const byQuery = await s.call("GET", "/tasks/nope?A2A-Version=1.0", undefined, { "A2A-Version": "" });
    expect(reasonOf(byQuery)).toBe("VERSION_NOT_SUPPORTED"); // an empty header is still the header
    const res = await fetch(`${s.rest}/tasks/nope?A2A-Version=1.0`, { headers: { "X-API-Key": s.aliceKey } });
    expect(res.status).toBe(404);
    const headerWins = await s.call("GET", "/tasks/nope?A2A-Version=1.0", undefined, { "A2A-Version": "0.3" });
    expect(reasonOf(headerWins)).toBe("VERSION_NOT_SUPPORTED");
  });

  test("400 INVALID_ARGUMENT with a BadRequest naming the field (A-6, R-BIND-22)", async () => {
    const empty = await s.call("POST", "/message:send", { message: { messageId: "", role: "ROLE_USER", parts: [{ text: "x" }] } });
    expect(row(empty)).toEqual([400, 400, "INVALID_ARGUMENT", undefined]);
    expect(violatedFields(empty)).toEqual(["message.message_id"]);
    const unknownEnum = await s.call("POST", "/message:send", { message: { messageId: "m", role: "ROLE_NOPE", parts: [{ text: "x" }] } });
    expect(row(unknownEnum)).toEqual([400, 400, "INVALID_ARGUMENT", undefined]);
  });

  test("R-BIND-7, R-HTTP-12: 401 UNAUTHENTICATED with WWW-Authenticate, before the body is read", async () => {
    const answer = await s.call("POST", "/message:send", "{not even json", { "X-API-Key": "a2a_wrong" });
    expect([answer.status, answer.body.error?.code, answer.body.error?.status]).toEqual([401, 401, "UNAUTHENTICATED"]);
    expect(answer.headers.get("www-authenticate")).toContain('header="X-API-Key"');
    const missing = await s.call("GET", "/extendedAgentCard", undefined, { "X-API-Key": "" });
    expect(missing.status).toBe(401); // R-XCARD-2
  });

  test("R-HTTP-12: 429 RESOURCE_EXHAUSTED with Retry-After once a principal is over its request rate", async () => {
    let answer: RestAnswer | undefined;
    for (let i = 0; i < 40 && answer?.status !== 429; i++) answer = await plain.call("GET", "/tasks/t", undefined, { ...REQUIRED, "X-API-Key": plain.bobKey });
    expect([answer?.status, answer?.body.error?.code, answer?.body.error?.status]).toEqual([429, 429, "RESOURCE_EXHAUSTED"]);
    expect(Number(answer?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });

  test("A-31: another principal's task is 404 TASK_NOT_FOUND", async () => {
    const answer = await s.call("GET", `/tasks/${await finishedTask(s)}`, undefined, { "X-API-Key": s.bobKey });
    expect(row(answer)).toEqual([404, 404, "NOT_FOUND", "TASK_NOT_FOUND"]);
  });

  test("403 PERMISSION_DENIED, 429 RESOURCE_EXHAUSTED, 503 UNAVAILABLE, 504 DEADLINE_EXCEEDED, 500 INTERNAL (the binding's mapping)", () => {
    const http = (error: unknown) => {
      const failure = restFailure(toErrorStatus(error, () => undefined));
      return [failure.httpStatus, failure.body.error.code, failure.body.error.status];
    };
    expect(http(new AuthError("permission_denied", "SCOPE_MISSING", "needs a scope"))).toEqual([403, 403, "PERMISSION_DENIED"]);
    expect(http(new LimitExceededError("RATE_LIMITED", "slow down", 1000))).toEqual([429, 429, "RESOURCE_EXHAUSTED"]);
    expect(restFailure(toErrorStatus(new LimitExceededError("RATE_LIMITED", "slow down", 1500), () => undefined)).headers).toEqual({ "Retry-After": "2" }); // R-HTTP-12
    expect(http(new StatusError(Code.UNAVAILABLE, "shutting down"))).toEqual([503, 503, "UNAVAILABLE"]);
    expect(http(new StatusError(Code.DEADLINE_EXCEEDED, "too slow"))).toEqual([504, 504, "DEADLINE_EXCEEDED"]);
    const internal = restFailure(toErrorStatus(new Error("a secret cause"), () => undefined));
    expect([internal.httpStatus, internal.body.error.status]).toEqual([500, "INTERNAL"]);
    expect(JSON.stringify(internal.body)).not.toContain("a secret cause");
  });
});

describe("R-HTTP-10, BQ-14, R-BIND-32: the HTTP layer's own refusals, in the same body", () => {
  test("R-HTTP-10: an unknown route is 404 NOT_FOUND without TASK_NOT_FOUND; a known path with another verb is 405 with Allow", async () => {
    const unknown = await s.call("GET", "/no/such/route");
    expect(row(unknown)).toEqual([404, 404, "NOT_FOUND", undefined]);
    const wrongVerb = await s.call("DELETE", "/tasks/t1");
    expect([wrongVerb.status, wrongVerb.headers.get("allow")]).toEqual([405, "GET"]);
    const configs = await s.call("PUT", "/tasks/t1/pushNotificationConfigs");
    expect([configs.status, configs.headers.get("allow")]).toEqual([405, "POST, GET"]);
    const send = await s.call("GET", "/message:send");
    expect([send.status, send.headers.get("allow")]).toEqual([405, "POST"]);
  });

  test("BQ-14: a body that is not JSON by its Content-Type is 415 INVALID_ARGUMENT; application/json and a charset are fine", async () => {
    const wrong = await s.call("POST", "/message:send", message("story"), { "Content-Type": "text/plain" });
    expect([wrong.status, wrong.body.error?.status]).toEqual([415, "INVALID_ARGUMENT"]);
    const json = await s.call("POST", "/message:send", message("story"), { "Content-Type": "application/json; charset=utf-8" });
    expect(json.status).toBe(200);
  });

  test("R-BIND-32: a body over A2A_MAX_MESSAGE_BYTES is 413, the server unharmed", async () => {
    const limit = 4 * 1024 * 1024; // the default A2A_MAX_MESSAGE_BYTES
    const answer = await s.call("POST", "/message:send", { message: { messageId: "x".repeat(limit + 10) } });
    expect([answer.status, answer.body.error?.code]).toEqual([413, 413]);
    expect((await s.call("GET", "/tasks/still-up")).status).toBe(404);
  });

  test("malformed JSON, a JSON array and a wrong-typed field are 400 INVALID_ARGUMENT naming the body or the field", async () => {
    const broken = await s.call("POST", "/message:send", "{not json");
    expect([broken.status, violatedFields(broken)]).toEqual([400, ["body"]]);
    const array = await s.call("POST", "/message:send", "[1]");
    expect([array.status, violatedFields(array)]).toEqual([400, ["body"]]);
    const typed = await s.call("POST", "/message:send", { message: { messageId: 5, role: "ROLE_USER", parts: [] } });
    expect(typed.status).toBe(400);
  });
});

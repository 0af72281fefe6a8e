/**
 * The HTTP+JSON binding's test setup: the JSON-RPC suites' server (HTTP listener on, API keys for
 * alice and bob, push on), with raw REST requests and clients of the official @a2a-js/sdk forced
 * onto HTTP+JSON.
 */
import { ClientFactory, RestTransportFactory, type Client } from "@a2a-js/sdk/client";
import type { Agent } from "../../src/lifecycle/ports/agent.js";
import { startJsonRpcSetup, type JsonRpcSetup } from "../jsonrpc/jsonrpc-support.js";

export interface RestSetup extends JsonRpcSetup {
  /** The HTTP+JSON base URL as the card lists it. */
  readonly rest: string;
  /** A raw request below the base (alice's key and A2A-Version 1.0 unless overridden). */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<RestAnswer>;
  /** The same, returning the fetch Response (for SSE and headers). */
  fetch(method: string, path: string, body?: string, headers?: Record<string, string>): Promise<Response>;
  /** An SDK client over HTTP+JSON presenting `apiKey`. */
  restClient(apiKey?: string): Promise<Client>;
}

export interface RestAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown> & { error?: RestError };
}

export interface RestError {
  code: number;
  status: string;
  message: string;
  details: Array<Record<string, unknown>>;
}

export async function startRestSetup(env: Record<string, string> = {}, card: Partial<Agent["card"]> = {}): Promise<RestSetup> {
  const setup = await startJsonRpcSetup(env, card);
  const rest = setup.server.app.card.supportedInterfaces.find((i) => i.protocolBinding === "HTTP+JSON")?.url ?? "";
  const rawFetch = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
    fetch(rest + path, {
      method,
      headers: {
        "A2A-Version": "1.0",
        "X-API-Key": setup.aliceKey,
        ...(body === undefined ? {} : { "Content-Type": "application/a2a+json" }),
        ...headers,
      },
      ...(body === undefined ? {} : { body }),
    });
  return {
    ...setup,
    rest,
    fetch: rawFetch,
    async call(method, path, body, headers) {
      const res = await rawFetch(method, path, body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body), headers);
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text === "" ? {} : (JSON.parse(text) as RestAnswer["body"]) };
    },
    restClient(apiKey) {
      const fetchImpl: typeof fetch = (input, init) =>
        fetch(input, apiKey === undefined ? init : { ...init, headers: { ...(init?.headers as Record<string, string>), "X-API-Key": apiKey } });
      const factory = new ClientFactory({ transports: [new RestTransportFactory({ fetchImpl })], preferredTransports: ["HTTP+JSON"] });
      return factory.createFromUrl(setup.base);
    },
  };
}

/** The A2A ErrorInfo reason in an error body's details. */
export const reasonOf = (answer: RestAnswer): unknown =>
  answer.body.error?.details.find((d) => String(d["@type"]).endsWith("google.rpc.ErrorInfo"))?.["reason"];

/** The fields a BadRequest in an error body names. */
export const violatedFields = (answer: RestAnswer): string[] =>
  (
    answer.body.error?.details.find((d) => String(d["@type"]).endsWith("google.rpc.BadRequest"))?.["fieldViolations"] as Array<{ field: string }> | undefined
  )?.map((v) => v.field) ?? [];

export const message = (text: string, extra: Record<string, unknown> = {}) => ({
  message: { messageId: `m-${Math.random()}`, role: "ROLE_USER", parts: [{ text }], ...extra },
});

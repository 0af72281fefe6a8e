import { SpanKind, SpanStatusCode, type Attributes, type Context, type Span, type Tracer } from "@opentelemetry/api";
import { A2AService } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { PushDelivery, RunObservation, StoreCommit } from "../lifecycle/index.js";
import type { CallEnded } from "../service/call-observer.js";
import { PeerCache } from "./peer-address.js";

/*
 * The service's own spans, what each is named and carries (OpenTelemetry's RPC, GenAI agent and
 * database conventions, and a2a.* attributes), made by the SDK's tracer: its sampler, ids, limits
 * and span processor decide and export them. tracing.ts decides when they start and end.
 */

const A2A_SERVICE = A2AService.typeName;

/** Codes that mean the server failed (OpenTelemetry's RPC conventions for server spans); the others are the client's. */
const SERVER_ERROR_CODES: ReadonlySet<number> = new Set([2, 4, 12, 13, 14, 15]);

export class ServiceSpans {
  /** The agent's name, for the run spans; set once the agent is loaded. */
  agentName = "agent";
  readonly #tracer: Tracer;
  readonly #methodSpanNames = new Map<string, string>();
  readonly #peers = new PeerCache();

  constructor(tracer: Tracer) {
    this.#tracer = tracer;
  }

  /** Whether a call to `service` gets a span: A2A RPCs do; health checks and reflection do not. */
  traces(service: string): boolean {
    return service === A2A_SERVICE;
  }

  /** An A2A RPC's SERVER span `lf.a2a.v1.A2AService/<Method>`, child of the client's context (or a root). */
  startCall(method: string, parent: Context, binding = "grpc"): Span {
    // rpc.system names the binding that carried the call: "grpc" or "jsonrpc".
    const attributes: Attributes = { "rpc.system": binding, "rpc.service": A2A_SERVICE, "rpc.method": method };
    return this.#tracer.startSpan(this.#methodSpanName(method), { kind: SpanKind.SERVER, attributes }, parent);
  }

  endCall(span: Span, call: CallEnded): void {
    if (span.isRecording()) {
      span.setAttribute("rpc.grpc.status_code", call.code);
      if (call.taskId !== undefined) span.setAttribute("a2a.task.id", call.taskId);
      const remote = call.remote;
      const peer =
        remote?.remoteAddress !== undefined && remote.remotePort !== undefined
          ? { address: remote.remoteAddress, port: remote.remotePort }
          : this.#peers.parse(call.peer);
      if (peer !== undefined) {
        span.setAttribute("network.peer.address", peer.address);
        span.setAttribute("network.peer.port", peer.port);
      }
      if (SERVER_ERROR_CODES.has(call.code)) span.setStatus({ code: SpanStatusCode.ERROR, message: call.details ?? "" });
    }
    span.end();
  }

  /** An agent run's `invoke_agent <agent>` span, timed by the observation's own clock readings. */
  startRun(run: RunObservation, parent: Context): Span {
    const attributes: Attributes = {
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": this.agentName,
      "gen_ai.conversation.id": run.contextId,
    };
    if (run.taskId !== undefined) attributes["a2a.task.id"] = run.taskId;
    if (run.resumed) attributes["a2a.run.resumed"] = true;
    return this.#tracer.startSpan(`invoke_agent ${this.agentName}`, { kind: SpanKind.INTERNAL, attributes, startTime: epochMs(run.startedAt) }, parent);
  }

  endRun(span: Span, run: RunObservation): void {
    if (run.taskId !== undefined) span.setAttribute("a2a.task.id", run.taskId);
    if (run.failed) span.setStatus({ code: SpanStatusCode.ERROR, message: "the agent failed" });
    span.end(run.durationMs === undefined ? undefined : epochMs(run.startedAt + run.durationMs));
  }

  /** A store's group commit, `<store> commit`, ended as it is made (the commit is over when published). */
  commit(commit: StoreCommit, parent: Context): void {
    const end = nowMs();
    const attributes: Attributes = {
      "db.system.name": commit.store,
      "db.operation.name": "COMMIT",
      "a2a.store.batch.writes": commit.writes,
      "a2a.store.batch.tasks": commit.tasks,
    };
    const span = this.#tracer.startSpan(`${commit.store} commit`, { kind: SpanKind.CLIENT, attributes, startTime: end - commit.durationMs }, parent);
    if (commit.failed) span.setStatus({ code: SpanStatusCode.ERROR, message: "the commit failed; its writes were lost" });
    span.end(end);
  }

  /** A webhook request's `push delivery` CLIENT span, started as the request goes. */
  startDelivery(parent: Context, startMs?: number): Span {
    return this.#tracer.startSpan("push delivery", { kind: SpanKind.CLIENT, startTime: startMs }, parent);
  }

  endDelivery(span: Span, delivery: PushDelivery, endMs: number): void {
    span.setAttributes({ "a2a.push.outcome": delivery.outcome, "a2a.push.attempt": delivery.attempt });
    if (delivery.outcome === "gave-up" || delivery.outcome === "retrying") span.setStatus({ code: SpanStatusCode.ERROR, message: delivery.outcome });
    span.end(endMs);
  }

  /** The span name of an A2A method, made once per method. */
  #methodSpanName(method: string): string {
    let name = this.#methodSpanNames.get(method);
    if (name === undefined) {
      name = `${A2A_SERVICE}/${method}`;
      this.#methodSpanNames.set(method, name);
    }
    return name;
  }
}

/** Epoch milliseconds with sub-millisecond precision (a span time the SDK takes as it is). */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** A `performance.now()` reading as epoch milliseconds (what nowMs() would have said then). */
export function epochMs(performanceNow: number): number {
  return performance.timeOrigin + performanceNow;
}

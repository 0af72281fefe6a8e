import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import type { PeerCertificate } from "node:tls";
import type { A2AService } from "../../gen/es/lf/a2a/v1/a2a_pb.js";

/*
 * The binding-neutral face of the A2A service (issue 34, item 1): the generated protobuf-es
 * request messages in, a CallContext beside them, response messages (or a stream of
 * StreamResponse) out, the core's named errors thrown. Each binding (src/protocol for gRPC,
 * src/jsonrpc for JSON-RPC) is an adapter that decodes its wire into these requests, calls the
 * same handlers, and encodes what they return or throw; no binding imports another.
 */

export type { CallMetadata, CallMetadataValue } from "../auth/call-metadata.js";
import type { CallMetadata } from "../auth/call-metadata.js";

/** The connection's transport security: with mutual TLS, the client's certificate. */
export interface TransportSecurity {
  readonly sslPeerCertificate?: PeerCertificate;
}

/** What a handler knows about its call, whatever binding carried it. */
export interface CallContext {
  /** The RPC's name as in the proto, e.g. "SendMessage". */
  readonly method: string;
  /**
   * The A2A generation the caller speaks: "0.3" when a v0.3 endpoint translated the call
   * (see asV03Call), else "1.0" (undefined means "1.0"). Push configs remember it (R-V03-70).
   */
  readonly protocolVersion?: "1.0" | "0.3";
  /** Request metadata (gRPC) or headers (HTTP bindings). */
  readonly metadata: CallMetadata;
  /** Aborted when the client cancels, the deadline passes, the server shuts the stream, or the call ends. */
  readonly signal: AbortSignal;
  /**
   * Calls `listener` when the call ends from now on (not if it has already ended), as the
   * signal's abort event does, without building an AbortSignal. Returns the remover.
   */
  onEnd(listener: (reason: Error) => void): () => void;
  /** Adds a field to this call's "call ended" record (and so its log line), e.g. ("correlation_id", id). */
  setLogField(key: string, value: string): void;
  /** The task this call is about, for its "call ended" record (task_id). */
  setTaskId(taskId: string): void;
  /**
   * The verified caller, for the "call ended" record. Authentication sets it in the handler's
   * begin(), after the version check (ruling A-15); unset when no authentication is configured.
   */
  setPrincipal(principal: string): void;
  /** The connection's transport security: with mutual TLS, the client's certificate. */
  getAuthContext(): TransportSecurity;
  /**
   * Sets a response header (e.g. a2a-extensions). Headers go out with the unary response or
   * error, or before a stream's first message; a header set after that is dropped.
   */
  setResponseHeader(key: string, value: string): void;
}

export type UnaryHandler<I, O> = (request: I, call: CallContext) => Promise<O>;

export interface StreamWriter<O> {
  /**
   * Queues a message. Returns false when the client is not keeping up (the transport's flow
   * control): wait for waitForDrain() before writing more. Also false, and the message is
   * dropped, once the stream is closed.
   */
  write(message: O): boolean;
  /** Resolves when writing may go on, or when the stream has closed. */
  waitForDrain(): Promise<void>;
  /** True once the stream has ended: by the client, its deadline, the handler, or shutdown. */
  readonly closed: boolean;
}

/** Resolve = the stream ends normally; throw = the stream ends with that error. */
export type ServerStreamHandler<I, O> = (request: I, call: CallContext, out: StreamWriter<O>) => Promise<void>;

type HandlerFor<M> = M extends { methodKind: "unary"; input: infer I extends DescMessage; output: infer O extends DescMessage }
  ? UnaryHandler<MessageShape<I>, MessageShape<O>>
  : M extends { methodKind: "server_streaming"; input: infer I extends DescMessage; output: infer O extends DescMessage }
    ? ServerStreamHandler<MessageShape<I>, MessageShape<O>>
    : never;

/**
 * Handlers for every method of a generated service, keyed by the RPC name as in the proto
 * (SendMessage, ...). The generated shape is keyed by local name (sendMessage), which for
 * these names is the RPC name with a lower-case first letter.
 */
export type ServiceHandlers<S> =
  S extends GenService<infer M extends GenServiceMethods> ? { [K in keyof M & string as Capitalize<K>]: HandlerFor<M[K]> } : never;

/** The 11 RPCs of lf.a2a.v1.A2AService. A server may implement any subset; the rest answer "not implemented". */
export type A2AServiceHandlers = ServiceHandlers<typeof A2AService>;

/** The same call, marked as spoken by a v0.3 client (the v0.3 endpoints wrap the context they hand to the v1.0 face). */
export function asV03Call(call: CallContext): CallContext {
  return {
    method: call.method,
    protocolVersion: "0.3",
    get metadata() {
      return call.metadata;
    },
    get signal() {
      return call.signal;
    },
    onEnd: (listener) => call.onEnd(listener),
    setLogField: (key, value) => call.setLogField(key, value),
    setTaskId: (taskId) => call.setTaskId(taskId),
    setPrincipal: (principal) => call.setPrincipal(principal),
    getAuthContext: () => call.getAuthContext(),
    setResponseHeader: (key, value) => call.setResponseHeader(key, value),
  };
}

import * as grpc from "@grpc/grpc-js";
import { fromBinary, toBinary, type DescMessage, type DescMethod, type DescService, type Message } from "@bufbuild/protobuf";
import {
  ListTasksResponseSchema,
  SendMessageRequestSchema,
  SendMessageResponseSchema,
  StreamResponseSchema,
  TaskSchema,
  type ListTasksResponse,
  type SendMessageResponse,
  type StreamResponse,
  type Task,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { encodeMessagePayload, encodeTask, encodeTaskPayload } from "../codec/task-encoder.js";
import { encodeListTasksResponse } from "../codec/list-response-encoder.js";
import { streamResponseBytes } from "../codec/stream-response-encoder.js";
import { installProtobufTextEncoding } from "./protobuf-text-encoding.js";
import { decodeSendMessageRequest } from "../codec/send-request-decoder.js";
import type { CallObservers, ObservedCall } from "../service/call-observer.js";
import type { StreamRegistry } from "./stream-registry.js";
import { linkCall, unlinkCall, type LinkedCall } from "./call-retention.js";
import type { CallContext, ServerStreamHandler, StreamWriter, UnaryHandler } from "../service/face.js";

/**
 * The gRPC edge as protoc-gen-es sees it: a grpc-js ServiceDefinition built from a
 * generated GenService (no proto-loader), and handlers written against the generated
 * message types. Handlers get a CallContext instead of grpc-js call objects, so the
 * A2A logic never touches grpc-js streams directly.
 */

/** grpc-js's transport security of a call (its type is not exported from the package root). */
export type AuthContext = ReturnType<grpc.ServerUnaryCall<unknown, unknown>["getAuthContext"]>;

// The face's types, re-exported for the gRPC edge's callers (they live in src/service/face.ts).
export type { A2AServiceHandlers, CallContext, ServerStreamHandler, ServiceHandlers, StreamWriter, UnaryHandler } from "../service/face.js";

/** The status a failed call ends with. */
export interface CallStatus {
  readonly code: grpc.status;
  readonly details: string;
  readonly metadata?: grpc.Metadata;
}

/** Turns whatever a handler threw into the call's status. */
export type ToStatus = (error: unknown, call: CallContext) => CallStatus;

/** Until the A2A error mapping is plugged in: every error is INTERNAL, and its message is never sent. */
export const defaultToStatus: ToStatus = () => ({ code: grpc.status.INTERNAL, details: "internal error" });

/** What the adapter reads on each call, so handlers can be installed after the server is bound. */
export interface AdapterRuntime {
  handlers: Readonly<Partial<Record<string, unknown>>>;
  toStatus: ToStatus;
  /** Set when shutdown has begun: calls that still arrive get UNAVAILABLE. */
  closing: boolean;
  readonly streams: StreamRegistry;
  /** Told of every call at its start and end (the one seam: see call-observer.ts). */
  readonly observers: CallObservers;
  /** The adapter encodes unary responses itself, refusing one over this size as grpc-js would (see unaryCall). */
  readonly maxSendBytes: number;
}

export const SHUTTING_DOWN = "server is shutting down";

/** A request that did not decode; handed to the handler wrapper instead of throwing inside grpc-js (which would say INTERNAL). */
class UndecodableRequest {
  constructor(readonly error: unknown) {}
}

/** A grpc-js ServiceDefinition for a protoc-gen-es service, keyed by RPC name. */
export function createServiceDefinition(service: DescService): grpc.ServiceDefinition {
  installProtobufTextEncoding(); // faster string conversion for every message the server codes (same bytes)
  // grpc-js types this boundary loosely; the schemas below are what keeps it honest.
  const definition: Record<string, grpc.MethodDefinition<any, any>> = {};
  for (const method of service.methods) {
    if (method.methodKind !== "unary" && method.methodKind !== "server_streaming") {
      throw new Error(`${service.typeName}/${method.name}: ${method.methodKind} methods are not supported`);
    }
    definition[method.name] = {
      path: `/${service.typeName}/${method.name}`,
      requestStream: false,
      responseStream: method.methodKind === "server_streaming",
      requestSerialize: (message: Message) => asBuffer(toBinary(method.input, message)),
      // Kept as bytes; the handler wrapper decodes them (see requestDecoder).
      requestDeserialize: (bytes: Buffer) => bytes,
      responseSerialize: method.methodKind === "server_streaming" ? serializeShared(method.output) : serializeUnary(method.output),
      responseDeserialize: (bytes: Buffer) => fromBinary(method.output, bytes),
    };
  }
  return definition;
}

/**
 * A Task, or a response (SendMessageResponse, StreamResponse) holding just a task, is encoded by
 * the static Task encoder (src/codec/task-encoder.ts: the same bytes as toBinary, several times
 * faster); anything else by toBinary.
 */
function responseEncoder(schema: DescMessage): (message: Message) => Uint8Array {
  const encode = (message: Message) => toBinary(schema, message);
  if (schema.typeName === TaskSchema.typeName) return (message) => encodeTask(message as Task);
  if (schema.typeName === ListTasksResponseSchema.typeName) return (message) => encodeListTasksResponse(message as ListTasksResponse) ?? encode(message);
  if (schema.typeName !== SendMessageResponseSchema.typeName && schema.typeName !== StreamResponseSchema.typeName) return encode;
  return (message) => {
    const { payload, $unknown } = message as SendMessageResponse | StreamResponse;
    if ($unknown !== undefined) return encode(message);
    if (payload.case === "task") return encodeTaskPayload(payload.value);
    if (payload.case === "message") return encodeMessagePayload(payload.value);
    return encode(message);
  };
}

function serializeUnary(schema: DescMessage): (message: Message | Uint8Array) => Buffer {
  const encode = responseEncoder(schema);
  // The adapter may have encoded the response already (to check its size before logging it).
  return (message) => asBuffer(message instanceof Uint8Array ? message : encode(message));
}

/**
 * One event fans out to every subscriber as the same response object; it is serialized
 * once and the bytes reused (grpc-js copies them into its own frame, so sharing is safe).
 */
function serializeShared(schema: DescMessage): (message: Message) => Buffer {
  // Stream responses: every payload by the static encoders, cached where the stream pipe also reads sizes.
  if (schema.typeName === StreamResponseSchema.typeName) return (message) => streamResponseBytes(message as StreamResponse);
  const encode = responseEncoder(schema);
  const encoded = new WeakMap<Message, Buffer>();
  return (message) => {
    let bytes = encoded.get(message);
    if (!bytes) encoded.set(message, (bytes = asBuffer(encode(message))));
    return bytes;
  };
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Static decoders for the requests that carry most traffic, used when they recognize the bytes
 * (they decline anything unusual, and fromBinary decodes it); each gives what fromBinary gives.
 */
const FAST_DECODERS: ReadonlyMap<string, (bytes: Uint8Array) => unknown> = new Map([[SendMessageRequestSchema.typeName, decodeSendMessageRequest]]);

/**
 * The request's decoder, used by the handler wrappers and not as grpc-js's deserializer: grpc-js's
 * call objects keep what the deserializer returned after the call (see call-retention.ts).
 */
function requestDecoder(schema: DescMessage): (bytes: Buffer) => unknown {
  const fast = FAST_DECODERS.get(schema.typeName);
  return (bytes) => {
    try {
      return fast?.(bytes) ?? fromBinary(schema, bytes);
    } catch (error) {
      return new UndecodableRequest(error);
    }
  };
}

/** The grpc-js implementation of a service: every method dispatches to runtime.handlers at call time. */
export function createServiceImplementation(service: DescService, runtime: AdapterRuntime): grpc.UntypedServiceImplementation {
  const implementation: grpc.UntypedServiceImplementation = {};
  for (const method of service.methods) {
    implementation[method.name] =
      method.methodKind === "server_streaming" ? serverStreamingCall(service, method, runtime) : unaryCall(service, method, runtime);
  }
  return implementation;
}

/** A status for a call that must not reach its handler, or null to go ahead. */
function refusal(service: DescService, method: DescMethod, runtime: AdapterRuntime, request: unknown): CallStatus | null {
  if (request instanceof UndecodableRequest) {
    return { code: grpc.status.INVALID_ARGUMENT, details: `request is not a valid ${method.input.typeName} message` };
  }
  if (runtime.closing) return { code: grpc.status.UNAVAILABLE, details: SHUTTING_DOWN };
  if (typeof runtime.handlers[method.name] !== "function") {
    return { code: grpc.status.UNIMPLEMENTED, details: `method ${service.typeName}/${method.name} is not implemented` };
  }
  return null;
}

function statusOf(error: unknown, ctx: GrpcCallContext, runtime: AdapterRuntime): CallStatus {
  let status: CallStatus;
  try {
    status = runtime.toStatus(error, ctx);
  } catch (mappingError) {
    status = defaultToStatus(mappingError, ctx);
  }
  // Keep the cause for the record (and log line) of calls that failed on the server's side.
  if (status.code === grpc.status.INTERNAL || status.code === grpc.status.UNKNOWN) ctx.observed.error = error;
  return status;
}

function asServiceError(status: CallStatus): Partial<grpc.ServiceError> {
  return { code: status.code, details: status.details, metadata: status.metadata ?? new grpc.Metadata() };
}

/**
 * A unary call, reported to the observers by the adapter itself (not through an interceptor,
 * which costs a wrapping call object and its listeners per call). The response is encoded here,
 * so that the "call ended" record tells what the client gets: a response over the send limit
 * becomes RESOURCE_EXHAUSTED, as grpc-js would make it, and an encoding failure INTERNAL.
 */
function unaryCall(service: DescService, method: DescMethod, runtime: AdapterRuntime): grpc.handleUnaryCall<unknown, unknown> {
  const { observers, maxSendBytes } = runtime;
  const encode = responseEncoder(method.output);
  const decode = requestDecoder(method.input);
  return (call, callback) => {
    const observed = observers.begin(service.typeName, method.name, false, call, call.metadata);
    const request = decode(call.request as Buffer);
    const refused = refusal(service, method, runtime, request);
    if (refused) return failCall(observed, callback, refused);
    const ctx = new GrpcCallContext(method.name, call, observed, false);
    const handler = runtime.handlers[method.name] as UnaryHandler<unknown, unknown>;
    const running = observers.wrapsRun ? observed.run(() => handler(request, ctx)) : handler(request, ctx);
    // Why end() in each branch and not finally(): two promises fewer per call.
    running.then(
      (response) => {
        try {
          ctx.flushHeaders();
          const bytes = encodeChecked(encode, response as Message, maxSendBytes, ctx);
          if (bytes instanceof Uint8Array) {
            observed.end(grpc.status.OK, undefined);
            callback(null, bytes);
          } else {
            failCall(observed, callback, bytes);
          }
        } finally {
          ctx.end();
        }
      },
      (error: unknown) => {
        try {
          const status = statusOf(error, ctx, runtime);
          ctx.flushHeaders();
          failCall(observed, callback, status);
        } finally {
          ctx.end();
        }
      },
    );
  };
}

/** Ends a unary call with `status`, after telling the observers. */
function failCall(observed: ObservedCall, callback: grpc.sendUnaryData<unknown>, status: CallStatus): void {
  observed.end(status.code, status.details);
  callback(asServiceError(status));
}

/** The response's bytes, or the status the call must end with instead. */
function encodeChecked(encode: (message: Message) => Uint8Array, response: Message, maxBytes: number, ctx: GrpcCallContext): Uint8Array | CallStatus {
  let bytes: Uint8Array;
  try {
    bytes = encode(response);
  } catch (error) {
    ctx.observed.error = error;
    return { code: grpc.status.INTERNAL, details: "internal error" };
  }
  if (maxBytes >= 0 && bytes.byteLength > maxBytes) {
    return { code: grpc.status.RESOURCE_EXHAUSTED, details: `Sent message larger than max (${bytes.byteLength + 5} vs. ${maxBytes})` };
  }
  return bytes;
}

/** A server-streaming call, reported to the observers as a unary call is: by the adapter, with the status it ends with. */
function serverStreamingCall(service: DescService, method: DescMethod, runtime: AdapterRuntime): grpc.handleServerStreamingCall<unknown, unknown> {
  const { observers } = runtime;
  const decode = requestDecoder(method.input);
  return (call) => {
    const observed = observers.begin(service.typeName, method.name, true, call, call.metadata);
    const request = decode(call.request as Buffer);
    const refused = refusal(service, method, runtime, request);
    if (refused) {
      observed.end(refused.code, refused.details);
      call.emit("error", asServiceError(refused));
      return;
    }
    const ctx = new GrpcCallContext(method.name, call, observed, true);
    const writer = new GrpcStreamWriter(call, ctx);
    const unregister = runtime.streams.add({
      close: (code, details) => {
        if (writer.close()) {
          observed.end(code, details);
          call.emit("error", asServiceError({ code, details }));
        }
        ctx.end(new Error(details));
      },
    });
    const handler = runtime.handlers[method.name] as ServerStreamHandler<unknown, unknown>;
    const running = observers.wrapsRun ? observed.run(() => handler(request, ctx, writer)) : handler(request, ctx, writer);
    running
      .then(
        () => {
          if (!writer.close()) return;
          ctx.flushHeaders();
          observed.end(grpc.status.OK, undefined);
          call.end();
        },
        (error: unknown) => {
          const status = statusOf(error, ctx, runtime);
          if (!writer.close()) return;
          ctx.flushHeaders();
          observed.end(status.code, status.details);
          call.emit("error", asServiceError(status));
        },
      )
      .finally(() => {
        unregister();
        ctx.end();
      });
  };
}

type AnyServerCall = grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>;

/**
 * Why a shared reason: a call that ended normally is not an error anyone inspects, and an
 * Error per call costs a stack capture (~10 µs). Frozen, so no call can alter another's.
 */
const CALL_ENDED: Error = Object.freeze(new Error("call ended"));

class GrpcCallContext implements CallContext, LinkedCall {
  readonly metadata: grpc.Metadata;
  /** A streaming call's writer, told when the stream drains or the call is cancelled. */
  writer: GrpcStreamWriter<unknown> | undefined = undefined;
  // Why lazy: an AbortController costs several µs and most calls never read their signal.
  #abort: AbortController | undefined;
  #endReason: Error | undefined;
  #headers: grpc.Metadata | undefined;
  #headersSent = false;
  /** An array, not a Set: there is usually one listener, and a Set costs its hash table per call. */
  #endListeners: Array<(reason: Error) => void> | undefined;

  /** `observed`: the call's record for the observers, ended as unanswered when grpc-js reports the call cancelled. */
  constructor(
    readonly method: string,
    readonly call: AnyServerCall,
    readonly observed: ObservedCall,
    streaming: boolean,
  ) {
    this.metadata = call.metadata;
    // Shared listeners find this context through a link end() cuts (call-retention.ts).
    linkCall(call, this, streaming);
  }

  /** The call was cancelled, its deadline passed, or it ended. */
  cancelled(): void {
    this.observed.endUnanswered(this.call.getDeadline());
    if (this.#endReason === undefined) this.end(new Error("call cancelled or deadline exceeded"));
    this.writer?.close();
  }

  drained(): void {
    this.writer?.drained();
  }

  get signal(): AbortSignal {
    if (this.#abort === undefined) {
      this.#abort = new AbortController();
      if (this.#endReason !== undefined) this.#abort.abort(this.#endReason);
    }
    return this.#abort.signal;
  }

  onEnd(listener: (reason: Error) => void): () => void {
    if (this.#endReason !== undefined) return () => {};
    // A function may be added twice; wrap it so each registration is its own entry.
    const entry = (reason: Error) => listener(reason);
    // A one-entry literal at first: an empty array's first push reserves 17 slots.
    if (this.#endListeners === undefined) this.#endListeners = [entry];
    else this.#endListeners.push(entry);
    const listeners = this.#endListeners;
    return () => {
      if (this.#endListeners !== listeners) return; // ended: end() is calling them, leave its list alone
      const at = listeners.indexOf(entry);
      if (at >= 0) listeners.splice(at, 1);
    };
  }

  setLogField(key: string, value: string): void {
    this.observed.fields[key] = value;
  }

  setTaskId(taskId: string): void {
    this.observed.taskId = taskId;
  }

  setPrincipal(principal: string): void {
    this.observed.principal = principal;
  }

  getAuthContext(): AuthContext {
    return this.call.getAuthContext();
  }

  setResponseHeader(key: string, value: string): void {
    if (!this.#headersSent) (this.#headers ??= new grpc.Metadata()).set(key, value);
  }

  /** Sends the response headers set so far (once); later ones are dropped. */
  flushHeaders(): void {
    if (this.#headersSent) return;
    this.#headersSent = true;
    if (this.#headers !== undefined) this.call.sendMetadata(this.#headers);
  }

  end(reason: Error = CALL_ENDED): void {
    if (this.#endReason !== undefined) return;
    this.#endReason = reason;
    this.#detach();
    this.#abort?.abort(reason);
    const listeners = this.#endListeners;
    this.#endListeners = undefined;
    for (const listener of listeners ?? []) {
      try {
        listener(reason);
      } catch (error) {
        queueMicrotask(() => {
          throw error; // as an abort-event listener's error would: reported, not swallowed
        });
      }
    }
  }

  /** Cuts what grpc-js's call objects, which outlive the call, reach of ours: this context, its observed call, its writer. */
  #detach(): void {
    unlinkCall(this.call);
  }
}

class GrpcStreamWriter<O> implements StreamWriter<O> {
  #closed = false;
  readonly #drainWaiters = new Set<() => void>();

  /** Told of 'drain' and 'cancelled' by its context (no listeners of its own: see call-retention.ts). */
  constructor(
    private readonly call: grpc.ServerWritableStream<unknown, O>,
    private readonly ctx: GrpcCallContext,
  ) {
    ctx.writer = this as GrpcStreamWriter<unknown>;
  }

  drained(): void {
    this.#wake();
  }

  get closed(): boolean {
    return this.#closed;
  }

  write(message: O): boolean {
    if (this.#closed) return false;
    this.ctx.flushHeaders();
    return this.call.write(message);
  }

  waitForDrain(): Promise<void> {
    if (this.#closed || !this.call.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.add(resolve));
  }

  /** Marks the stream closed; true if this call closed it (so the caller ends the call). */
  close(): boolean {
    if (this.#closed) return false;
    this.#closed = true;
    this.#wake();
    return true;
  }

  #wake(): void {
    for (const resolve of this.#drainWaiters) resolve();
    this.#drainWaiters.clear();
  }
}

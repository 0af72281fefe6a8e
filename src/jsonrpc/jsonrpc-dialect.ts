import type { JsonValue, Message } from "@bufbuild/protobuf";
import type { CallContext, CallMetadata, StreamWriter } from "../service/face.js";

/*
 * One JSON-RPC engine, two dialects (issue 35, item 2): the engine (jsonrpc-binding.ts) owns the
 * HTTP side (method, content type, admission, body, envelope, observers, SSE framing, errors); a
 * dialect owns what differs between A2A generations: its method names, how params become the
 * v1.0 face's requests, how results and stream events are written, and which headers carry the
 * service parameters. The 1.0 dialect is ProtoJSON of lf.a2a.v1; the 0.3 dialect translates.
 */

/** One stream event as a dialect writes it: the JSON-RPC result, and its SSE id (A-33 resume cursor), if any. */
export interface StreamResult {
  readonly result: JsonValue;
  readonly cursor?: string | undefined;
}

/** What a dialect method is given to call the face with. */
export interface FaceCall {
  /** The face's handlers by RPC name. */
  readonly handlers: Readonly<Partial<Record<string, unknown>>>;
  /** The call's context as the face must see it (see JsonRpcDialect.context). */
  readonly context: CallContext;
}

/** A JSON-RPC method of a dialect, served by one RPC of the v1.0 face. */
export interface DialectMethod {
  /** The face's RPC that serves it: the handler called, and the method name observers see. */
  readonly rpc: string;
  readonly streaming: boolean;
  /** The params as the RPC's request; throws InvalidRequestError (-32602) naming the field. */
  decode(params: JsonValue): Message;
  /** A unary method: calls the face, returns the JSON-RPC result. */
  invoke(face: FaceCall, request: Message): Promise<JsonValue>;
  /** A streaming method: runs the face's stream, each event written as one result. */
  stream(face: FaceCall, request: Message, out: StreamWriter<StreamResult>): Promise<void>;
}

export interface JsonRpcDialect {
  /** The service name observers see (metrics, logs, spans): the generation it speaks. */
  readonly service: string;
  /** The method of a name, or the -32601 message saying why there is none. */
  method(name: string): DialectMethod | string;
  /**
   * "0.3": a v0.3 endpoint: its checkVersion runs in place of the binding's 1.0 rule, and
   * admission and the face skip the 1.0 check for its calls, as for every v0.3 endpoint.
   */
  readonly protocolVersion?: "0.3";
  /** The endpoint's own version rule (a 0.3 endpoint's), in place of the binding's. Throws VERSION_NOT_SUPPORTED. */
  checkVersion?(metadata: CallMetadata): void;
  /** The call's context as handed to the face (0.3: asV03Call, its response headers renamed). */
  context(call: CallContext): CallContext;
}

/** A StreamWriter that writes each message through `map`, for a face stream whose events a dialect rewrites. */
export function mappedWriter<I, O>(out: StreamWriter<O>, map: (message: I) => O): StreamWriter<I> {
  return {
    write: (message) => out.write(map(message)),
    waitForDrain: () => out.waitForDrain(),
    get closed() {
      return out.closed;
    },
  };
}

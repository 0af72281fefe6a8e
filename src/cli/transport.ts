import type { MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import type { A2AService } from "../../gen/es/lf/a2a/v1/a2a_pb.js";

/**
 * What the commands ask of a server, whatever the binding: the unary operations of
 * lf.a2a.v1.A2AService (send, get, list, cancel, push config create/get/list/delete, extended
 * card) and its two streams (send streaming, subscribe). The method names and message types are
 * the generated service's, so every binding takes and returns the same protobuf-es messages.
 */

type Methods<S> = S extends GenService<infer M extends GenServiceMethods> ? M : never;
export type A2AMethods = Methods<typeof A2AService>;
export type UnaryNames = { [K in keyof A2AMethods]: A2AMethods[K]["methodKind"] extends "unary" ? K : never }[keyof A2AMethods];
export type StreamNames = { [K in keyof A2AMethods]: A2AMethods[K]["methodKind"] extends "server_streaming" ? K : never }[keyof A2AMethods];
export type In<K extends keyof A2AMethods> = A2AMethods[K]["input"];
export type Out<K extends keyof A2AMethods> = MessageShape<A2AMethods[K]["output"]>;

/** The bindings the CLI speaks (--binding), and how agent cards spell them (§5.2). */
export const BINDINGS = { grpc: "GRPC", jsonrpc: "JSONRPC", rest: "HTTP+JSON" } as const;
export type BindingName = keyof typeof BINDINGS;

export interface ResponseStream<T> extends AsyncIterable<T> {
  /** Ends the call on the client side; a task it watched goes on. */
  cancel(): void;
}

export interface A2ATransport {
  readonly binding: BindingName;
  /** Makes sure the server can be reached where the binding allows asking first (gRPC); a no-op elsewhere. */
  connect(timeoutMs?: number): Promise<void>;
  unary<K extends UnaryNames>(name: K, init: MessageInitShape<In<K>>): Promise<Out<K>>;
  stream<K extends StreamNames>(name: K, init: MessageInitShape<In<K>>): ResponseStream<Out<K>>;
  close(): void;
}

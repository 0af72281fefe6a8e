import * as grpc from "@grpc/grpc-js";

/** An open streaming call that the server can end on its own terms. */
export interface OpenStream {
  /** Ends the call with this status; a no-op when it has already ended. */
  close(code: grpc.status, details: string): void;
}

/**
 * The streaming calls open right now. A graceful shutdown must end them itself:
 * grpc-js's tryShutdown waits for every open call, and a task stream may stay open
 * indefinitely.
 */
export class StreamRegistry {
  readonly #open = new Set<OpenStream>();

  /** Registers a stream; the returned function unregisters it (call it when the call ends). */
  add(stream: OpenStream): () => void {
    this.#open.add(stream);
    return () => this.#open.delete(stream);
  }

  get size(): number {
    return this.#open.size;
  }

  /** Ends every open stream with this status. */
  closeAll(code: grpc.status, details: string): void {
    for (const stream of [...this.#open]) {
      this.#open.delete(stream);
      stream.close(code, details);
    }
  }
}

type StreamingCall = grpc.ServerWritableStream<unknown, unknown> | grpc.ServerDuplexStream<unknown, unknown>;

/**
 * Wraps a third-party service implementation (health Watch, reflection) so that its
 * server-streaming and bidi calls are registered and can be ended at shutdown.
 */
export function trackStreams(
  definition: grpc.ServiceDefinition,
  implementation: grpc.UntypedServiceImplementation,
  registry: StreamRegistry,
): grpc.UntypedServiceImplementation {
  const wrapped: grpc.UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(definition)) {
    const impl = implementation[name] ?? (method.originalName ? implementation[method.originalName] : undefined);
    if (impl === undefined) continue;
    if (!method.responseStream) {
      wrapped[name] = impl;
      continue;
    }
    wrapped[name] = ((call: StreamingCall) => {
      let ended = false;
      const unregister = registry.add({
        close(code, details) {
          if (ended) return;
          ended = true;
          call.emit("error", { code, details, metadata: new grpc.Metadata() });
        },
      });
      call.once("cancelled", () => {
        ended = true;
        unregister();
      });
      call.once("finish", () => {
        ended = true;
        unregister();
      });
      (impl as (c: StreamingCall) => void)(call);
    }) as grpc.UntypedHandleCall;
  }
  return wrapped;
}

/** A `{ addService }` that routes through trackStreams, for libraries that add themselves to a server. */
export function trackingServer(server: grpc.Server, registry: StreamRegistry): Pick<grpc.Server, "addService"> {
  return {
    addService: (definition, implementation) => server.addService(definition, trackStreams(definition, implementation, registry)),
  };
}

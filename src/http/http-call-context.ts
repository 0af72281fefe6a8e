import type { IncomingMessage, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import type { ObservedCall, PeerSource, RemoteAddress } from "../service/call-observer.js";
import { toErrorStatus, type ErrorStatus } from "../service/error-status.js";
import type { CallContext, CallMetadata, TransportSecurity } from "../service/face.js";
import { Code } from "../service/status-code.js";

/** An HTTP request as the call seam sees its peer: the socket's address, read once. */
export function peerOf(req: IncomingMessage): PeerSource {
  const remote: RemoteAddress = { remoteAddress: req.socket.remoteAddress, remotePort: req.socket.remotePort };
  const peer = `${remote.remoteAddress ?? "unknown"}:${remote.remotePort ?? 0}`;
  return { getPeer: () => peer, getRemote: () => remote };
}

/** The TLS peer of an HTTPS request: with mutual TLS, the verified client certificate (R-BIND-5). */
export function transportSecurityOf(req: IncomingMessage): TransportSecurity {
  const socket = req.socket as Partial<TLSSocket>;
  if (socket.encrypted !== true || typeof socket.getPeerCertificate !== "function" || socket.authorized !== true) return {};
  return { sslPeerCertificate: socket.getPeerCertificate() };
}

/**
 * The face's CallContext for one call over an HTTP binding. The call ends when its response has
 * been written, or when the client goes away first (then its signal aborts: a stream's
 * subscription ends, never the task).
 */
export class HttpCallContext implements CallContext {
  readonly #abort = new AbortController();
  #ended = false;
  readonly #listeners: Array<(reason: Error) => void> = [];
  /** Response headers the handler set (e.g. a2a-extensions), sent with the response's head. */
  readonly responseHeaders: Record<string, string> = {};

  constructor(
    readonly method: string,
    readonly metadata: CallMetadata,
    readonly observed: ObservedCall,
    private readonly req: IncomingMessage,
    res: ServerResponse,
  ) {
    // 'close' before the response finished: the client is gone.
    res.once("close", () => this.end(new Error(res.writableFinished ? "call ended" : "the client closed the connection")));
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  onEnd(listener: (reason: Error) => void): () => void {
    if (this.#ended) return () => {};
    const entry = (reason: Error) => listener(reason);
    this.#listeners.push(entry);
    return () => {
      const at = this.#listeners.indexOf(entry);
      if (at >= 0) this.#listeners.splice(at, 1);
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

  getAuthContext(): TransportSecurity {
    return transportSecurityOf(this.req);
  }

  setResponseHeader(key: string, value: string): void {
    this.responseHeaders[key] = value;
  }

  end(reason: Error): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#abort.abort(reason);
    for (const listener of this.#listeners.splice(0)) {
      try {
        listener(reason);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}

/** The face's error status for what a handler threw; the cause of an internal error goes to the call's record. */
export function callStatusOf(error: unknown, observed: ObservedCall): ErrorStatus {
  const status = toErrorStatus(error, (correlationId) => {
    observed.fields["correlation_id"] = correlationId;
  });
  if (status.code === Code.INTERNAL || status.code === Code.UNKNOWN) observed.error = error;
  return status;
}

import type { CallMetadata } from "./face.js";
import { Code } from "./status-code.js";

/*
 * The one seam at the edge: every RPC the server answers, on every binding (the A2A service's
 * unary and streaming calls alike over gRPC and JSON-RPC, and gRPC health and reflection) is reported to the same list of CallObservers, once
 * when it arrives and once when it ends, with one "call ended" record. The RPC log line is one
 * observer (call-log.ts); metrics and tracing attach as others (see StartServerOptions.observers).
 *
 * Why not a grpc-js interceptor per call: it costs a wrapping call object and its listeners per
 * call, and whatever those reach stays reachable from grpc-js's call objects, which outlive the
 * call (see grpc-adapter.ts). The A2A adapter reports its calls itself; only the services it does
 * not own (health, reflection) go through an interceptor (createObservingInterceptor).
 */

/** The service of A2A v0.3 calls, on every binding (gRPC's a2a.v1.A2AService; the v0.3 JSON-RPC and REST endpoints report under it). */
export const A2A_V03_SERVICE = "a2a.v1.A2AService";

/**
 * The A2A generation a call speaks, from its service name (issue 35 item 8): "0.3" for the v0.3
 * service, "1.0" for every other (lf.a2a.v1.A2AService, and health and reflection, which have no
 * A2A version of their own). Metrics label it and the RPC log line carries it as `a2a_version`.
 */
export function a2aVersionOf(service: string): "1.0" | "0.3" {
  return service === A2A_V03_SERVICE ? "0.3" : "1.0";
}

/** A call as observers see it when it arrives, before its request is decoded. */
export interface CallStart {
  /** The service's full name, e.g. "lf.a2a.v1.A2AService". */
  readonly service: string;
  /** The RPC's name as in the proto, e.g. "SendMessage". */
  readonly method: string;
  /** The binding that carried the call: "grpc" or "jsonrpc". */
  readonly binding: string;
  /** True for a server-streaming call. */
  readonly streaming: boolean;
  /** The request metadata (traceparent, a2a-version, ...). Observers read it, never change it. */
  readonly metadata: CallMetadata;
  /** The client's address; read when asked (it goes through the socket: µs per read), "unknown" once the connection is gone. */
  readonly peer: string;
  /** The client's address and port as grpc-js read them when the call arrived, where it lets us see them (cheaper than `peer`). */
  readonly remote: RemoteAddress | undefined;
}

/** The one "call ended" record: what the client got, and what the handler learned on the way. */
export interface CallEnded extends CallStart {
  /** The status the call ended with: sent by the server, or CANCELLED / DEADLINE_EXCEEDED when the client was gone first. */
  readonly code: number;
  /** The status message (none for OK). */
  readonly details: string | undefined;
  /** From arrival to the end, ms. */
  readonly durationMs: number;
  /** The verified caller, set by authentication (CallContext.setPrincipal); undefined when none is configured or it failed. */
  readonly principal: string | undefined;
  /** The task the call was about, once the handler knows it (CallContext.setTaskId). */
  readonly taskId: string | undefined;
  /** Further fields the handler added (CallContext.setLogField), e.g. correlation_id, slow_client. */
  readonly fields: Readonly<Record<string, string>>;
  /** What the handler threw, kept for calls that ended INTERNAL or UNKNOWN (the server's fault). */
  readonly error: unknown;
}

/**
 * Told of every call. Each hook is optional: an observer implements what it needs.
 * `S` is the observer's own per-call state: what `started` returns is handed to its `around`
 * and `ended` for the same call (a span, a start time), so no observer needs a map of calls.
 *
 * Hooks run synchronously on the call's path: keep them cheap. An error thrown by `started` or
 * `ended` is reported (StartServerOptions' logger) and does not affect the call or the other
 * observers.
 */
export interface CallObserver<S = unknown> {
  /** The call arrived (its metadata is known, its request not yet decoded). */
  started?(call: CallStart): S;
  /**
   * Runs the call's handler: the observer must call `run` once, synchronously, and return what
   * it returns. Use it to run the handler, and everything it starts (the agent's run), inside an
   * async context of the observer's (OpenTelemetry: `context.with(spanContext, run)`). Calls
   * refused before their handler (undecodable request, unimplemented, shutting down) have no run.
   */
  around?<T>(call: CallStart, state: S, run: () => T): T;
  /** The call ended: called once per call that `started` was called for. */
  ended?(call: CallEnded, state: S): void;
}

/** Reports an observer's failure; the server logs it. */
export type ObserverFailure = (error: unknown, hook: "started" | "ended") => void;

/**
 * The observers of a server, composed once. The edge makes an ObservedCall per call through it.
 * With no `around` observer the handler runs directly (no closure per call).
 */
export class CallObservers {
  /** True when some observer wraps the handler's run (see CallObserver.around). */
  readonly wrapsRun: boolean;
  readonly #observers: ReadonlyArray<CallObserver<unknown>>;
  readonly #onFailure: ObserverFailure;

  /**
   * `remoteOf` reads the remote address of a source without getRemote (grpc-js's call objects:
   * the gRPC edge passes them as they are, so that no wrapper is made per call).
   */
  constructor(
    observers: ReadonlyArray<CallObserver<any>>,
    onFailure: ObserverFailure,
    readonly remoteOf: RemoteReader = () => undefined,
  ) {
    this.#observers = observers;
    this.#onFailure = onFailure;
    this.wrapsRun = observers.some((o) => o.around !== undefined);
  }

  /** Starts observing a call that has just arrived. `source` answers getPeer(); `metadata` may come later (setMetadata). */
  begin(service: string, method: string, streaming: boolean, source: PeerSource, metadata: CallMetadata | undefined, binding = "grpc"): ObservedCall {
    const call = new ObservedCall(this, service, method, streaming, source, binding);
    if (metadata !== undefined) this.started(call, metadata);
    return call;
  }

  /** @internal Calls every `started` hook; their states go on the call. */
  started(call: ObservedCall, metadata: CallMetadata): void {
    call.metadata = metadata;
    call.observed = true;
    const observers = this.#observers;
    if (observers.length === 1) {
      call.states = this.#start(observers[0]!, call);
      return;
    }
    const states: unknown[] = [];
    for (const observer of observers) states.push(this.#start(observer, call));
    call.states = states;
  }

  /** @internal `run` inside every `around` hook, the first observer's outermost. */
  run<T>(call: ObservedCall, run: () => T): T {
    const observers = this.#observers;
    let wrapped = run;
    for (let i = observers.length - 1; i >= 0; i--) {
      const observer = observers[i]!;
      if (observer.around === undefined) continue;
      const inner = wrapped;
      const state = this.#stateOf(call, i);
      wrapped = () => observer.around!(call, state, inner);
    }
    return wrapped();
  }

  /** @internal Calls every `ended` hook. */
  ended(call: ObservedCall): void {
    const observers = this.#observers;
    for (let i = 0; i < observers.length; i++) {
      const ended = observers[i]!.ended;
      if (ended === undefined) continue;
      try {
        ended.call(observers[i], call, this.#stateOf(call, i));
      } catch (error) {
        this.#onFailure(error, "ended");
      }
    }
  }

  #start(observer: CallObserver<unknown>, call: ObservedCall): unknown {
    if (observer.started === undefined) return undefined;
    try {
      return observer.started(call);
    } catch (error) {
      this.#onFailure(error, "started");
      return undefined;
    }
  }

  #stateOf(call: ObservedCall, index: number): unknown {
    return this.#observers.length === 1 ? call.states : (call.states as unknown[] | undefined)?.[index];
  }
}

/** What an ObservedCall asks for the peer: a grpc-js call, or an HTTP binding's request. */
export interface PeerSource {
  getPeer(): string;
  /** The client's address and port when known without a socket read (an HTTP binding has them). */
  getRemote?(): RemoteAddress | undefined;
}

/** The client's address and port. */
export interface RemoteAddress {
  readonly remoteAddress?: string | undefined;
  readonly remotePort?: number | undefined;
}

/** Reads the remote address a source offers (see remoteOf for grpc-js's calls). */
export type RemoteReader = (source: PeerSource) => RemoteAddress | undefined;

const NO_METADATA: CallMetadata = Object.freeze({ get: () => [], getMap: () => ({}) });

/** See ObservedCall.endUnanswered. */
const DEADLINE_SLACK_MS = 100;

/**
 * One call from arrival to end: the record observers get. The edge fills it (setTaskId, ...
 * through CallContext) and ends it once with end() or endUnanswered(); later ends do nothing.
 * Nothing of a grpc-js call object may lead here once the call has ended (see grpc-adapter.ts).
 */
export class ObservedCall implements CallEnded {
  metadata: CallMetadata = NO_METADATA;
  code: number = Code.UNKNOWN;
  details: string | undefined = undefined;
  durationMs = 0;
  principal: string | undefined = undefined;
  taskId: string | undefined = undefined;
  readonly fields: Record<string, string> = {};
  error: unknown = undefined;
  /** @internal The observers' states (one observer: its state itself). */
  states: unknown = undefined;
  /** @internal The `started` hooks have run. */
  observed = false;
  #ended = false;
  readonly #startedAt = performance.now();

  constructor(
    private readonly observers: CallObservers,
    readonly service: string,
    readonly method: string,
    readonly streaming: boolean,
    private readonly source: PeerSource,
    readonly binding: string,
  ) {}

  get peer(): string {
    try {
      return this.source.getPeer();
    } catch {
      return "unknown"; // a torn-down HTTP/2 session has no socket to ask
    }
  }

  get remote(): RemoteAddress | undefined {
    return this.source.getRemote !== undefined ? this.source.getRemote() : this.observers.remoteOf(this.source);
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** The metadata arrived after the call did (an interceptor sees them apart): the observers are told now. */
  setMetadata(metadata: CallMetadata): void {
    this.observers.started(this, metadata);
  }

  /** Runs the handler inside the observers' `around` hooks. */
  run<T>(run: () => T): T {
    return this.observers.run(this, run);
  }

  /** The call ends with this status: the observers are told (once). */
  end(code: number, details: string | undefined): void {
    if (this.#ended) return;
    this.#ended = true;
    this.code = code;
    this.details = code === Code.OK ? undefined : details;
    this.durationMs = performance.now() - this.#startedAt;
    if (!this.observed) this.observers.started(this, this.metadata); // ended before its metadata came: every `ended` has its `started`
    this.observers.ended(this);
  }

  /**
   * The call ended without a status from the server: the client cancelled, or its deadline passed.
   * A cancel that arrives within DEADLINE_SLACK_MS before the server's deadline counts as the
   * deadline: the client gives up at its own deadline, which the server's lags by the time the
   * request took to be read (tens of ms on a loaded machine).
   */
  endUnanswered(deadline: Date | number): void {
    if (this.#ended) return;
    const at = deadline instanceof Date ? deadline.getTime() : deadline;
    const expired = at - DEADLINE_SLACK_MS <= Date.now();
    this.end(expired ? Code.DEADLINE_EXCEEDED : Code.CANCELLED, expired ? "deadline exceeded" : "cancelled");
  }
}

import { EventEmitter } from "node:events";

/*
 * What grpc-js's call objects keep alive after a call, and how this server keeps that small.
 * Every garbage-collection workaround of the edge is here; grpc-adapter.ts only calls it.
 *
 * Why: Node keeps a finished HTTP/2 stream's JS object alive until V8's next full collection (its
 * native handle holds it), and with it grpc-js's call objects. Every young-generation collection
 * before that promotes to the old generation whatever they still reach, which the next full
 * collection then has to mark and sweep. What decides the cost is not what a call allocates but
 * what survives it: ~10 KB of short-lived garbage per call cost nothing measurable, while each KB
 * a finished call left reachable cost ~2.7 µs of server CPU per call (issue3 benchmark).
 *
 * So a finished call leaves nothing of ours reachable from grpc-js's call objects:
 * 1. One shared listener per event for every call ("cancelled", and "drain" for streams) that
 *    finds the call's context through a link on the call object, which unlinkCall() cuts when the
 *    call ends. A closure per call would keep the context, its observed call (call-observer.ts)
 *    and the handler's state reachable instead.
 * 2. Requests are decoded by the adapter, not by grpc-js's deserializer (grpc-adapter.ts,
 *    requestDecoder): the call objects keep what the deserializer returned; the bytes they keep
 *    anyway, the decoded request need not be.
 * 3. The HTTP/2 stream behind a call loses its listeners once it has closed (releaseStreamOnClose):
 *    through them it reached all of grpc-js's call objects and all they reach, ~2.5 KB per call.
 *    Measured on a bare grpc-js server: promoted bytes per call 3.4 KB -> 0.9 KB, scavenge time per
 *    call 9.4 -> 3.4 µs (`npm run bench -- stream-release`).
 *
 * grpc-js does not expose the stream behind a call. It is read from grpc-js 1.14's call objects
 * (ServerUnaryCallImpl / ServerWritableStreamImpl `.call`, an interceptor's ServerInterceptingCall
 * `.nextCall`, BaseServerInterceptingCall `.stream`); where they are not what this expects, nothing
 * is done. test/perf/call-retention.test.ts proves each point, and fails when a grpc-js upgrade
 * moves them.
 */

/** What the shared listeners call on a running call's context. */
export interface LinkedCall {
  /** grpc-js reported the call cancelled: client cancel, deadline, or the end of the call. */
  cancelled(): void;
  /** The stream may be written again ('drain'). */
  drained(): void;
}

const LINK = Symbol("linkedCall");
type Linkable = EventEmitter & { [LINK]?: LinkedCall };

/**
 * Links a grpc-js server call to its context until unlinkCall, through shared listeners, and has
 * its HTTP/2 stream released once closed. `streaming`: also report 'drain'.
 */
export function linkCall(call: EventEmitter, context: LinkedCall, streaming: boolean): void {
  (call as Linkable)[LINK] = context;
  // grpc-js emits "cancelled" once per call, so on() does what once() would without its wrapper and removal.
  call.on("cancelled", onCallCancelled);
  if (streaming) call.on("drain", onCallDrained);
  releaseStreamOnClose(call);
}

/** Cuts the link: from now on the call's listeners find nothing of ours. */
export function unlinkCall(call: EventEmitter): void {
  (call as Linkable)[LINK] = undefined;
}

/** The "cancelled" listener of every call: EventEmitter calls it with the call as `this`. */
function onCallCancelled(this: Linkable): void {
  this[LINK]?.cancelled();
}

function onCallDrained(this: Linkable): void {
  this[LINK]?.drained();
}

/** Releases the listeners of the HTTP/2 stream behind a grpc-js server call once it has closed. */
export function releaseStreamOnClose(call: object): void {
  streamBehind(call)?.on("close", releaseListeners);
}

/** The stream behind a grpc-js server call: its `.call`, then through any interceptors' `.nextCall`, to the `.stream`. */
export function streamBehind(call: object): EventEmitter | undefined {
  let inner = (call as { call?: unknown }).call;
  for (let depth = 0; depth < 8 && typeof inner === "object" && inner !== null; depth++) {
    const { stream, nextCall } = inner as { stream?: unknown; nextCall?: unknown };
    if (stream !== undefined) return stream instanceof EventEmitter ? stream : undefined;
    inner = nextCall;
  }
  return undefined;
}

/** A "close" listener shared by every stream: EventEmitter calls it with the stream as `this`. */
function releaseListeners(this: EventEmitter): void {
  // "close" is a stream's last event. The no-op keeps an unexpected late "error" from throwing.
  // EventEmitter's own removeAllListeners rather than Readable's, which schedules a tick to update
  // a reading state the closed stream no longer uses (each tick costs async-hook work while tracing runs).
  EventEmitter.prototype.removeAllListeners.call(this);
  this.on("error", ignore);
}

function ignore(): void {}

/** The client's end of a call's connection, as grpc-js read it from the socket when the call arrived. */
export interface RemoteAddress {
  readonly remoteAddress?: string | undefined;
  readonly remotePort?: number | undefined;
}

/**
 * What grpc-js 1.14 read of the connection when a server call arrived (ServerInterceptingCall's
 * getConnectionInfo, reached through the call object's `.call` as streamBehind does), or undefined
 * where the call objects are not what this expects. Why: getPeer() reads the socket through the
 * HTTP/2 session's proxy on every call and makes a new string, which tracing then parsed per call.
 */
export function remoteOf(call: object): RemoteAddress | undefined {
  const inner = (call as { call?: { getConnectionInfo?: unknown } }).call;
  if (typeof inner?.getConnectionInfo !== "function") return undefined;
  const info = (inner.getConnectionInfo as () => unknown).call(inner);
  return typeof info === "object" && info !== null ? (info as RemoteAddress) : undefined;
}

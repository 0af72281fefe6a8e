import type { Caller } from "./agent.js";

/** Who is calling and with which extensions; built by the protocol edge for every request. */
export interface RequestContext {
  readonly caller: Caller;
  readonly requestedExtensions: readonly string[];
  /** Extensions the agent used while answering; the edge echoes them (R-EXT-5). */
  readonly activatedExtensions: Set<string>;
  /** Aborted when the client is gone: a blocking wait stops waiting (the task goes on). */
  readonly signal?: AbortSignal;
  /**
   * The same news as `signal`'s abort event, preferred when given: registers a listener for
   * the client being gone from now on and returns its remover. Why: no AbortSignal to build
   * (several µs per call) when the edge can report the end of a call directly.
   */
  readonly onGone?: (listener: (reason: unknown) => void) => () => void;
  /** The A2A generation the caller speaks; undefined means "1.0". An inline push config keeps it (R-V03-70). */
  readonly protocolVersion?: "1.0" | "0.3";
}

/** Calls `listener` when the request's client is gone (from now on); returns the remover. */
export function watchGone(rc: RequestContext, listener: (reason: unknown) => void): () => void {
  if (rc.onGone) return rc.onGone(listener);
  const signal = rc.signal;
  if (!signal) return () => {};
  const onAbort = () => listener(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}

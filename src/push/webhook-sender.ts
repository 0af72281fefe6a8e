import type { LookupAddress, LookupOptions } from "node:dns";
import { Agent, type Dispatcher } from "undici";
import { DestinationRefusedError, type DestinationGuard } from "./destination-guard.js";

/** One POST to a webhook. */
export interface WebhookRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** What became of one attempt. */
export type AttemptResult =
  | { readonly kind: "answered"; readonly status: number; readonly retryAfter: string | undefined }
  | { readonly kind: "failed"; readonly reason: string }
  | { readonly kind: "refused"; readonly reason: string };

export interface WebhookSenderOptions {
  readonly guard: DestinationGuard;
  /** Per-request timeout, connection included (A-12, R-PUSHD-6), ms. */
  readonly timeoutMs: number;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** What a URL is, parsed once: where to dispatch it, and whether its literal address passed the guard. */
interface Target {
  readonly origin: string;
  readonly path: string;
  readonly refused: string | undefined;
}

/** Distinct webhook URLs remembered parsed and judged (a config's URL is used for each of its events). */
const MAX_TARGETS = 1024;
/** Bytes of an answer's body read at most; a longer body ends the connection (nobody reads it). */
const MAX_ANSWER_BYTES = 65536;

/**
 * Sends webhook requests with undici, to vetted addresses only: every connection asks
 * the guard, through the socket's `lookup`, for the addresses of the host, and connects to one
 * of those, so no second resolution can send it elsewhere. No redirect is followed (a dispatch
 * follows none) and no proxy is used (an Agent of its own: a pool of keep-alive connections per
 * origin; proxy variables are not read). Node's global fetch is not used: it ignores the agent,
 * and would bypass the guard.
 *
 * Per request, only what must be: a dispatch with a handler of our own (no response stream, no
 * AbortController), no timer of its own (one sweep of the requests in flight every tenth of the
 * timeout ends those past their deadline: a timer set and cleared per request cost ~1.5% of the
 * server's time per delivery); the URL is parsed and its literal judged once per URL.
 */
export class WebhookSender {
  private readonly agent: Agent;
  private readonly targets = new Map<string, Target>();
  /** Requests in flight, oldest first: with one timeout for all, also in deadline order. */
  private readonly inFlight = new Set<Attempt>();
  private readonly watched = new WeakSet<AbortSignal>();
  /** Runs while requests are in flight: a request times out at most a tenth of the timeout late. */
  private sweeper: NodeJS.Timeout | undefined;
  private readonly sweepMs: number;

  constructor(private readonly options: WebhookSenderOptions) {
    this.agent = new Agent({
      connect: { lookup: this.lookup, timeout: options.timeoutMs },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connections: 64,
    });
    this.sweepMs = Math.min(1000, Math.max(10, Math.floor(options.timeoutMs / 10)));
  }

  async send(webhook: WebhookRequest, signal?: AbortSignal): Promise<AttemptResult> {
    const target = this.targets.get(webhook.url) ?? (await this.judge(webhook.url));
    if (target.refused !== undefined) return { kind: "refused", reason: target.refused };
    if (signal?.aborted) return { kind: "failed", reason: describe(signal.reason) };
    if (signal !== undefined && !this.watched.has(signal)) {
      // One listener per signal (the service's stop), not one per request.
      this.watched.add(signal);
      signal.addEventListener("abort", () => {
        for (const attempt of this.inFlight) attempt.abort(signal.reason);
      });
    }
    return new Promise<AttemptResult>((resolve) => {
      const attempt = new Attempt(this.options.timeoutMs, Date.now() + this.options.timeoutMs, (result) => {
        this.inFlight.delete(attempt);
        resolve(result);
      });
      this.inFlight.add(attempt);
      if (this.sweeper === undefined) {
        this.sweeper = setInterval(this.sweep, this.sweepMs);
        this.sweeper.unref(); // an open request keeps the process alive by its socket, not by this
      }
      this.agent.dispatch({ origin: target.origin, path: target.path, method: "POST", headers: webhook.headers, body: webhook.body }, attempt);
    });
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    await this.agent.destroy();
  }

  /** Times out the requests past their deadline (the oldest come first); stops when none is in flight. */
  private readonly sweep = (): void => {
    const now = Date.now();
    for (const attempt of this.inFlight) {
      if (attempt.deadline > now) break;
      attempt.timeOut(); // ends it: it leaves inFlight once undici reports the abort
    }
    if (this.inFlight.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  };

  /** Parses a URL and judges a literal address by the guard's rules (a literal is connected to without a lookup). */
  private async judge(value: string): Promise<Target> {
    let target: Target;
    try {
      const url = new URL(value);
      const literal = url.hostname.replace(/^\[(.*)\]$/, "$1");
      await this.options.guard.vetLiteral(literal);
      target = { origin: url.origin, path: `${url.pathname}${url.search}`, refused: undefined };
    } catch (error) {
      target = { origin: "", path: "", refused: error instanceof DestinationRefusedError ? error.message : "the webhook URL cannot be read" };
    }
    if (this.targets.size >= MAX_TARGETS) this.targets.clear();
    this.targets.set(value, target);
    return target;
  }

  /** net.connect's lookup: the guard resolves and vets; the socket connects to what it returns. */
  private readonly lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    this.options.guard.vet(hostname).then(
      (addresses) => {
        if (options.all)
          callback(
            null,
            addresses.map((a) => ({ address: a.address, family: a.family })),
          );
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, "", 0),
    );
  };
}

/**
 * One request's handler, in undici's own (legacy) dispatch interface: the one its client calls
 * without a wrapper, and whose raw headers are not parsed into an object per answer (the newer
 * interface does both). The status and Retry-After are all that is kept of the answer; the body
 * is read and dropped. Its deadline bounds the whole request, connection included.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private abortRequest: ((error?: Error) => void) | undefined;
  private status = 0;
  private retryAfter: string | undefined;
  private bytes = 0;
  private done = false;
  private timedOut = false;
  /** A reason to abort that came before the request started: applied when it does. */
  private abortReason: Error | undefined;

  constructor(
    private readonly timeoutMs: number,
    /** Date.now() past which the sender's sweep times it out. */
    readonly deadline: number,
    private readonly finish: (result: AttemptResult) => void,
  ) {}

  timeOut(): void {
    if (this.timedOut || this.done) return;
    this.timedOut = true;
    this.abort(new Error("timeout"));
  }

  abort(reason: unknown): void {
    const error = reason instanceof Error ? reason : new Error(String(reason ?? "aborted"));
    if (this.abortRequest !== undefined) this.abortRequest(error);
    else this.abortReason ??= error;
  }

  onConnect(abort: (error?: Error) => void): void {
    this.abortRequest = abort;
    if (this.abortReason !== undefined) abort(this.abortReason);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.status = statusCode;
    if (statusCode < 200 || statusCode >= 300) this.retryAfter = headerValue(rawHeaders, "retry-after"); // a success needs none
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.bytes += chunk.length;
    if (this.bytes > MAX_ANSWER_BYTES) {
      // Answered: the rest of a huge body is not read; the connection goes.
      this.end({ kind: "answered", status: this.status, retryAfter: this.retryAfter });
      this.abortRequest?.(new Error("answer body too large"));
    }
    return true;
  }

  onComplete(): void {
    this.end(this.status === 0 ? { kind: "failed", reason: "no answer" } : { kind: "answered", status: this.status, retryAfter: this.retryAfter });
  }

  onError(error: Error): void {
    const refused = refusalIn(error);
    if (refused !== undefined) this.end({ kind: "refused", reason: refused.message });
    else if (this.timedOut) this.end({ kind: "failed", reason: `no answer within ${this.timeoutMs} ms` });
    else this.end({ kind: "failed", reason: describe(error) });
  }

  private end(result: AttemptResult): void {
    if (this.done) return;
    this.done = true;
    this.finish(result);
  }
}

/** The first value of a header in undici's raw list (name, value, name, value...), names in any case. */
function headerValue(raw: Buffer[], name: string): string | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.length === name.length && raw[i]!.toString("latin1").toLowerCase() === name) return raw[i + 1]!.toString("latin1");
  }
  return undefined;
}

function refusalIn(error: unknown): DestinationRefusedError | undefined {
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof DestinationRefusedError || (e as { code?: string }).code === "A2A_DESTINATION_REFUSED") return e as DestinationRefusedError;
  }
  return undefined;
}

function describe(error: unknown): string {
  const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.cause?.code ?? e.code;
  const message = e.cause?.message ?? e.message ?? String(error);
  return (code ? `${code}: ${message}` : message).slice(0, 200);
}

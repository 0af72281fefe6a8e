import type { LookupAddress, LookupOptions } from "node:dns";
import { Agent, request } from "undici";
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

/**
 * Sends webhook requests with undici, to vetted addresses only: every connection asks
 * the guard, through the socket's `lookup`, for the addresses of the host, and connects to one
 * of those, so no second resolution can send it elsewhere. No redirect is followed (undici's
 * `request` follows none) and no proxy is used (an Agent of its own; proxy variables are not
 * read). Node's global fetch is not used: it ignores the agent, and would bypass the guard.
 */
export class WebhookSender {
  private readonly agent: Agent;

  constructor(private readonly options: WebhookSenderOptions) {
    this.agent = new Agent({
      connect: { lookup: this.lookup, timeout: options.timeoutMs },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connections: 64,
    });
  }

  async send(webhook: WebhookRequest, signal?: AbortSignal): Promise<AttemptResult> {
    let url: URL;
    try {
      url = new URL(webhook.url);
      // A literal address is connected to without a lookup: judge it here, by the same rules.
      const literal = url.hostname.replace(/^\[(.*)\]$/, "$1");
      await this.options.guard.vetLiteral(literal);
    } catch (error) {
      if (error instanceof DestinationRefusedError) return { kind: "refused", reason: error.message };
      return { kind: "refused", reason: "the webhook URL cannot be read" };
    }
    // One controller, aborted by the timeout or by `signal` (cheaper than AbortSignal.any of two).
    const abort = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort(new Error("timeout"));
    }, this.options.timeoutMs);
    const onAbort = () => abort.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const answer = await request(url, {
        method: "POST",
        headers: webhook.headers,
        body: webhook.body,
        dispatcher: this.agent,
        signal: abort.signal,
      });
      const retryAfter = answer.headers["retry-after"];
      await answer.body.dump({ limit: 65536 }).catch(() => undefined);
      return { kind: "answered", status: answer.statusCode, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter };
    } catch (error) {
      const refused = refusalIn(error);
      if (refused !== undefined) return { kind: "refused", reason: refused.message };
      if (timedOut) return { kind: "failed", reason: `no answer within ${this.options.timeoutMs} ms` };
      return { kind: "failed", reason: describe(error) };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  async close(): Promise<void> {
    await this.agent.destroy();
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

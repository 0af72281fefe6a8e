import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request a test receiver got. */
export interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly json: Record<string, unknown>;
  readonly atMs: number;
}

/** How the receiver answers its n-th request (0-based): status, headers, and a delay before answering. */
export type Answer = { status: number; headers?: Record<string, string>; delayMs?: number };
export type Answerer = (request: Received, n: number) => Answer;

export interface Receiver {
  readonly port: number;
  readonly requests: Received[];
  url(path?: string): string;
  /** Resolves once `n` requests arrived, answered 2xx or not (rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number, accept?: (r: Received[]) => number): Promise<Received[]>;
  answerWith(answerer: Answerer): void;
  close(): Promise<void>;
}

/** A loopback address a receiver listens on: ::1, or any of 127.0.0.0/8 (one per "host" in fairness tests). */
export type LoopbackHost = "::1" | `127.${number}.${number}.${number}`;

/**
 * A real HTTP webhook receiver on loopback (127.0.0.1 or ::1, port 0): what push tests send
 * to. Nothing in the tests is ever sent anywhere else.
 */
export async function startReceiver(options: { host?: LoopbackHost; answer?: Answerer } = {}): Promise<Receiver> {
  const host = options.host ?? "127.0.0.1";
  let answerer: Answerer = options.answer ?? (() => ({ status: 200 }));
  const requests: Received[] = [];
  const waiters: Array<() => void> = [];
  const pending = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();
  let n = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(body) as Record<string, unknown>;
      } catch {
        // kept as text
      }
      const received: Received = { path: req.url ?? "", headers: req.headers, body, json, atMs: Date.now() };
      const answer = answerer(received, n++);
      requests.push(received);
      for (const w of waiters.splice(0)) w();
      pending.add(res);
      const timer = setTimeout(() => {
        timers.delete(timer);
        pending.delete(res);
        res.writeHead(answer.status, answer.headers ?? {});
        res.end();
      }, answer.delayMs ?? 0);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    requests,
    url: (path = "/hook") => `http://${host === "::1" ? "[::1]" : host}:${port}${path}`,
    answerWith: (a) => (answerer = a),
    waitFor(count, timeoutMs = 10_000, accept = (r) => r.length) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver: ${accept(requests)} of ${count} requests after ${timeoutMs} ms`)), timeoutMs);
        const check = () => {
          if (accept(requests) >= count) {
            clearTimeout(timer);
            resolve(requests);
          } else waiters.push(check);
        };
        check();
      });
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      for (const res of pending) res.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The StreamResponse kind of a webhook body: task, statusUpdate, artifactUpdate or message. */
export function kindOf(r: Received): string {
  return Object.keys(r.json)
    .filter((k) => ["task", "message", "statusUpdate", "artifactUpdate"].includes(k))
    .join(",");
}

/** The state a webhook body carries (the task's or the status update's). */
export function stateOf(r: Received): string | undefined {
  const body = r.json as { task?: { status?: { state?: string } }; statusUpdate?: { status?: { state?: string } } };
  return body.task?.status?.state ?? body.statusUpdate?.status?.state;
}

import { Client, credentials, Metadata, status, type ServiceError } from "@grpc/grpc-js";

/** Requests and responses stay bytes: the client neither encodes nor decodes per call. */
const identity = (b: Buffer): Buffer => b;

export interface LoadClient {
  readonly client: Client;
  /** Sent (cloned) with every call. */
  readonly metadata: Metadata;
  /** One call, for set-up and checks: the raw response bytes. */
  call(path: string, request: Buffer): Promise<Buffer>;
  close(): void;
}

/**
 * A raw grpc-js client on one HTTP/2 connection. `metadata` is sent with every call
 * (e.g. `{ "a2a-version": "1.0" }`).
 */
export function loadClient(address: string, metadata: Record<string, string> = {}): LoadClient {
  const client = new Client(address, credentials.createInsecure(), {
    "grpc.max_receive_message_length": 64 * 1024 * 1024,
  });
  const md = new Metadata();
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  return {
    client,
    metadata: md,
    call: (path, request) =>
      new Promise((resolve, reject) => {
        client.makeUnaryRequest(path, identity, identity, request, md.clone(), (err, res) => (err ? reject(err) : resolve(res!)));
      }),
    close: () => client.close(),
  };
}

export interface LoadOptions {
  readonly path: string;
  /** The serialized request, built once. */
  readonly request: Buffer;
  /** Calls kept in flight. */
  readonly inFlight: number;
  /** Calls to complete. */
  readonly calls: number;
  /** Stop starting calls after this long, even if `calls` is not reached. */
  readonly maxSeconds?: number;
}

export interface LoadResult {
  readonly calls: number;
  readonly errors: number;
  /** First error seen, for the report. */
  readonly firstError?: string;
  readonly elapsedMs: number;
  /** Per-call latencies in ms, completed calls only, unsorted. */
  readonly latenciesMs: Float64Array;
  /** Bytes of the last response. */
  readonly responseBytes: number;
}

/**
 * Closed-loop load: `inFlight` calls outstanding, each completion starts the next, until
 * `calls` have completed (or `maxSeconds` passed). Per call the client does little more
 * than grpc-js's own framing, so most of the machine is left to the server.
 */
export function runLoad(lc: LoadClient, options: LoadOptions): Promise<LoadResult> {
  const md = lc.metadata;
  const latencies = new Float64Array(options.calls);
  const deadline = options.maxSeconds === undefined ? Infinity : performance.now() + options.maxSeconds * 1000;
  let started = 0;
  let done = 0;
  let errors = 0;
  let firstError: string | undefined;
  let responseBytes = 0;
  const t0 = performance.now();
  return new Promise((resolve) => {
    const finish = () =>
      resolve({
        calls: done,
        errors,
        firstError,
        elapsedMs: performance.now() - t0,
        latenciesMs: latencies.subarray(0, done - errors),
        responseBytes,
      });
    let ok = 0;
    const startOne = () => {
      started++;
      const t = performance.now();
      lc.client.makeUnaryRequest(options.path, identity, identity, options.request, md.clone(), (err: ServiceError | null, res?: Buffer) => {
        const now = performance.now();
        done++;
        if (err) {
          errors++;
          firstError ??= `${status[err.code] ?? err.code}: ${err.details}`;
        } else {
          latencies[ok++] = now - t;
          responseBytes = res!.length;
        }
        if (started < options.calls && now < deadline) startOne();
        else if (done === started) finish();
      });
    };
    const initial = Math.min(options.inFlight, options.calls);
    for (let i = 0; i < initial; i++) startOne();
  });
}

/**
 * Streaming benchmark: one SendStreamingMessage whose agent appends N chunks to
 * one artifact, our server beside a bare grpc-js server streaming the same events prebuilt
 * (bench/servers/bare-stream-server.ts), in interleaved rounds, through a plain grpc-js client.
 *
 *   npm run bench -- streaming [--quick] [--profile] [--sqlite] [--baseline=DIR] [--per-turn] [--rounds=N]
 *
 * Two agent paces: "burst" (the agent writes as fast as the server takes it, as the memory
 * store lets it in one event-loop turn) and "per-turn" (an event-loop turn after each chunk, as
 * an agent awaiting each token of a model). Reported: server CPU µs per agent event (user +
 * system of the server process from "go" until the stream ended), responses on the wire, whether
 * every chunk arrived in order, and ours ÷ bare per round. Our server runs compiled (dist/).
 * --sqlite adds our server on the SQLite store. --profile profiles one extra (unmeasured)
 * 5,000-chunk run of each pace on each of our servers and appends the summaries.
 * --baseline=DIR adds our server as built in DIR (DIR/dist/src/main.js, e.g. a copy of an older
 * dist/ inside this checkout so that it finds node_modules): an A/B of two builds in the same
 * rounds. --per-turn runs the per-turn pace only; --rounds=N sets the 5,000-chunk rounds.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Client, credentials, Metadata } from "@grpc/grpc-js";
import { MessageSchema, Role, SendMessageRequestSchema, StreamResponseSchema } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { waitUntilServing } from "./lib/measure.js";
import { profileSummary } from "./lib/cpu-profile.js";
import { cpuMicros, startServerProcess, type ServerProcess } from "./lib/server-process.js";
import { formatNumber, markdownTable } from "./lib/table.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RESULTS = join(ROOT, "bench", "results");
const PATH = "/lf.a2a.v1.A2AService/SendStreamingMessage";
const identity = (b: Buffer) => b;

type Kind = "bare" | "ours" | "ours-sqlite" | "baseline";
export type Pace = "burst" | "per-turn";

export interface Run {
  readonly cpuMicros: number;
  readonly responses: number;
  readonly chunks: number;
  readonly inOrder: boolean;
  /** Receive time of the first chunk minus the agent's write of it (ms), ours only. */
  readonly firstChunkMs: number | undefined;
}

async function start(kind: Kind, dataDir: string, baseline?: string): Promise<ServerProcess> {
  if (kind === "bare") return startServerProcess({ name: "bare", script: join(ROOT, "bench/servers/bare-stream-server.ts"), tsx: true });
  return startServerProcess({
    name: kind,
    script: kind === "baseline" ? resolve(baseline!, "dist/src/main.js") : join(ROOT, "dist/src/main.js"),
    cwd: ROOT,
    env: (port) => ({
      A2A_LISTEN: `127.0.0.1:${port}`,
      A2A_LOG_LEVEL: "warn",
      A2A_LOG_FORMAT: "json",
      A2A_STORE: kind === "ours-sqlite" ? "sqlite" : "memory",
      A2A_DATA_DIR: dataDir,
      A2A_CARD_LISTEN: "off",
      A2A_AGENT_MODULE: "bench/agents/fanout-agent.mjs",
    }),
  });
}

/**
 * One stream of `n` chunks through `client`; unless the server is the bare one, its agent
 * (ours, or the SDK peer's: same IPC "go") is told to go once the task snapshot arrived.
 * Also used by fan-out's single-stream phase.
 *
 * The client keeps each response's bytes while the stream flows and decodes them (every
 * response, every chunk checked in order) only after the server's CPU was read at the end. Why:
 * decoding with protobuf-es costs the client more per response than a server spends writing it,
 * and a client that falls behind pushes back; our server then merges the appends that wait
 * (A-32) and writes fewer responses, so its CPU per event read low, and by how much changed with
 * the load of the moment. A client that keeps up gets every event as its own response (the
 * count is in the report): the per-event cost, not the merged one.
 */
export function stream(server: ServerProcess, kind: Kind | "sdk", n: number, pace: Pace, client: Client): Promise<Run> {
  const md = new Metadata();
  md.set("a2a-version", "1.0");
  md.set("bench-events", String(n));
  md.set("bench-yield", pace === "per-turn" ? "1" : "0");
  const request = Buffer.from(
    toBinary(
      SendMessageRequestSchema,
      create(SendMessageRequestSchema, {
        message: create(MessageSchema, { messageId: `s-${Math.random()}`, role: Role.USER, parts: [{ content: { case: "text", value: "stream" } }] }),
      }),
    ),
  );
  return new Promise((resolve, reject) => {
    let before: Promise<Awaited<ReturnType<ServerProcess["usage"]>>> | undefined = kind === "bare" ? server.usage() : undefined;
    const received: Buffer[] = [];
    /** Arrival times of the first responses (the first chunk is among them: after the task and its WORKING update). */
    const arrivals: number[] = [];
    let ended = false;
    const call = client.makeServerStreamRequest(PATH, identity, identity, request, md);
    call.on("data", (bytes: Buffer) => {
      if (received.length === 0 && kind !== "bare") {
        const r = fromBinary(StreamResponseSchema, bytes);
        if (r.payload.case !== "task") return reject(new Error(`the stream began with ${r.payload.case}, not the task`));
        const taskId = r.payload.value.id;
        before = server.usage();
        void before.then(() =>
          server.send({ bench: "fanout-go", taskId, events: n, intervalMs: 0, yieldEach: pace === "per-turn", padBytes: 0, replace: false }),
        );
      }
      if (arrivals.length < 8) arrivals.push(performance.timeOrigin + performance.now());
      received.push(bytes);
    });
    call.on("error", (error) => {
      if (!ended) reject(error);
    });
    call.on("end", () => {
      ended = true;
      void (async () => {
        const after = await server.usage();
        const cpu = cpuMicros(await before!, after);
        let chunks = 0;
        let inOrder = true;
        let firstChunkMs: number | undefined;
        for (let i = 1; i < received.length; i++) {
          const r = fromBinary(StreamResponseSchema, received[i]!);
          if (r.payload.case !== "artifactUpdate") continue;
          for (const part of r.payload.value.artifact!.parts) {
            const text = part.content.case === "text" ? part.content.value : "";
            const m = /^#seq=(\d+);t=([\d.]+);/.exec(text);
            if (m === null || Number(m[1]) !== chunks) inOrder = false;
            if (chunks === 0 && m !== null && i < arrivals.length) firstChunkMs = arrivals[i]! - Number(m[2]);
            chunks++;
          }
        }
        resolve({ cpuMicros: cpu, responses: received.length, chunks, inOrder, firstChunkMs: kind === "bare" ? undefined : firstChunkMs });
      })().catch(reject);
    });
  });
}

/** One server's CPU ÷ another's, round by round: "median× (each round)". */
function perRoundRatio(runs: ReadonlyArray<{ run: Run }>, base: ReadonlyArray<{ run: Run }>): string {
  const ratios = runs.map((r, i) => r.run.cpuMicros / base[i]!.run.cpuMicros).sort((a, b) => a - b);
  return `${ratios[Math.floor(ratios.length / 2)]!.toFixed(2)}× (${runs.map((r, i) => (r.run.cpuMicros / base[i]!.run.cpuMicros).toFixed(2)).join(", ")})`;
}

export interface StreamingOptions {
  readonly quick: boolean;
  readonly profile: boolean;
  readonly sqlite: boolean;
  /** A directory holding another build's dist/: run it beside ours. */
  readonly baseline?: string;
  /** The per-turn pace only. */
  readonly perTurn?: boolean;
  /** Rounds at 5,000 chunks (default 2 quick, 5 full). */
  readonly rounds?: number;
}

export async function runStreaming(options: StreamingOptions): Promise<string> {
  mkdirSync(RESULTS, { recursive: true });
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const dataDir = mkdtempSync(join(tmpdir(), "streaming-"));
  const kinds: Kind[] = ["bare", "ours", ...(options.sqlite ? (["ours-sqlite"] as const) : []), ...(options.baseline ? (["baseline"] as const) : [])];
  const servers = new Map<Kind, ServerProcess>();
  const clients = new Map<Kind, Client>();
  const sizes = options.quick
    ? [
        { n: 5_000, rounds: options.rounds ?? 2 },
        { n: 20_000, rounds: 1 },
      ]
    : [
        { n: 5_000, rounds: options.rounds ?? 5 },
        { n: 100_000, rounds: 2 },
      ];
  const paces: Pace[] = options.perTurn ? ["per-turn"] : ["burst", "per-turn"];
  const rows: string[][] = [];
  const perRound: Array<{ n: number; pace: Pace; kind: Kind; round: number; run: Run }> = [];
  try {
    for (const kind of kinds) {
      const s = await start(kind, dataDir, options.baseline);
      servers.set(kind, s);
      clients.set(kind, new Client(s.address, credentials.createInsecure(), { "grpc.max_receive_message_length": 64 * 1024 * 1024 }));
      await waitUntilServing(s, () => stream(s, kind, 10, "burst", clients.get(kind)!));
      await stream(s, kind, 2_000, "burst", clients.get(kind)!); // warm-up
      await stream(s, kind, 2_000, "per-turn", clients.get(kind)!);
    }
    for (const { n, rounds } of sizes) {
      for (const pace of paces) {
        for (let round = 0; round < rounds; round++) {
          const order = round % 2 === 0 ? kinds : [...kinds].reverse();
          for (const kind of order) {
            const run = await stream(servers.get(kind)!, kind, n, pace, clients.get(kind)!);
            perRound.push({ n, pace, kind, round, run });
            log(
              `${kind} n=${n} ${pace} round ${round + 1}: ${formatNumber(run.cpuMicros / n, 2)} µs/event, ${run.responses} responses, ${run.chunks} chunks${run.inOrder ? "" : " OUT OF ORDER"}`,
            );
          }
        }
        const of = (kind: Kind) => perRound.filter((r) => r.n === n && r.pace === pace && r.kind === kind);
        const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
        const bare = of("bare");
        for (const kind of kinds) {
          const runs = of(kind);
          const ratios = runs.map((r, i) => r.run.cpuMicros / bare[i]!.run.cpuMicros);
          rows.push([
            `${n.toLocaleString("en-US")}`,
            pace,
            kind,
            formatNumber(median(runs.map((r) => r.run.cpuMicros / n)), 2),
            kind === "bare" ? "1" : `${median(ratios).toFixed(2)}× (${ratios.map((x) => x.toFixed(2)).join(", ")})`,
            kind === "ours-sqlite" ? perRoundRatio(runs, of("ours")) : kind === "baseline" ? perRoundRatio(of("ours"), runs) : "",
            formatNumber(median(runs.map((r) => r.run.responses))),
            runs.every((r) => r.run.chunks === n && r.run.inOrder) ? "yes" : "NO",
            kind === "bare" ? "" : formatNumber(median(runs.map((r) => r.run.firstChunkMs ?? NaN)), 2),
          ]);
        }
      }
    }
    let profiles = "";
    if (options.profile) {
      for (const kind of kinds.filter((k) => k !== "bare")) {
        const s = servers.get(kind)!;
        for (const pace of paces) {
          const file = join(RESULTS, `streaming-${kind}-${pace}-${Date.now()}.cpuprofile`);
          await s.profileStart();
          await stream(s, kind, 5_000, pace, clients.get(kind)!);
          await s.profileStop(file);
          profiles += `\n\n### Profile: ${kind}, 5,000 chunks, ${pace} (unmeasured run)\n\n${profileSummary(file, 5_000, 15)}\n\nProfile: ${file}`;
        }
      }
    }
    const report = [
      `# streaming: one SendStreamingMessage of N chunks, ours vs bare grpc-js`,
      "",
      `\`npm run bench -- streaming${options.quick ? " --quick" : ""}${options.sqlite ? " --sqlite" : ""}${options.baseline ? ` --baseline=${options.baseline}` : ""}${options.perTurn ? " --per-turn" : ""}${options.rounds ? ` --rounds=${options.rounds}` : ""}${options.profile ? " --profile" : ""}\` — ${new Date().toISOString()}, ${cpus().length} × ${cpus()[0]?.model ?? "?"}, load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")} (shared machine)`,
      "",
      markdownTable(
        [
          "N",
          "pace",
          "server",
          "CPU µs / agent event (median)",
          "÷ bare per round (median; rounds)",
          "per round: SQLite ÷ memory, or ours ÷ baseline",
          "responses on the wire",
          "every chunk, in order",
          "first chunk ms",
        ],
        rows,
      ),
      profiles,
    ].join("\n");
    return report;
  } finally {
    for (const c of clients.values()) c.close();
    await Promise.all([...servers.values()].map((s) => s.stop()));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

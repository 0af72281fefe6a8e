// examples/chunked-report.mjs: streams an artifact in chunks.
// Send "report 5" with SendStreamingMessage: the task, WORKING, five chunks of the artifact "report"
// (the first starts it, the others append to it), a last chunk holding a data part, then COMPLETED.
import { dataPart } from "a2a-grpc-server";

const PAUSE_MS = Number(process.env.REPORT_PAUSE_MS ?? 200);
const pause = (ms, signal) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });

export default {
  card: {
    name: "Chunked report",
    description: "Writes a report of N lines and streams it line by line.",
    skills: [{ id: "report", name: "Report", description: "A report streamed in chunks.", tags: ["streaming"], examples: ["report 5"] }],
  },

  async execute(ctx) {
    const text = ctx.message.parts.map((p) => (p.content.case === "text" ? p.content.value : "")).join(" ");
    const lines = Math.min(Math.max(Number.parseInt(text.split(/\s+/)[1] ?? "", 10) || 3, 1), 50);
    const artifactId = "report";
    await ctx.working(`Writing ${lines} lines.`);
    for (let i = 1; i <= lines; i++) {
      if (i > 1) await pause(PAUSE_MS, ctx.signal);
      if (ctx.signal.aborted) return; // canceled: the service has already ended the task
      await ctx.artifact({ artifactId, name: "report", parts: [`line ${i} of ${lines}\n`] }, { append: i > 1 });
    }
    await ctx.artifact({ artifactId, parts: [dataPart({ lines, finishedAt: new Date().toISOString() })] }, { append: true, lastChunk: true });
    await ctx.complete(`The report has ${lines} lines.`);
  },
};

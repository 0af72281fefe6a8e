import { toJson } from "@bufbuild/protobuf";
import { StreamResponseSchema, TaskState, type StreamResponse } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { ResponseStream } from "./transport.js";
import type { CommandContext } from "./command.js";
import { ExitCode } from "./exit-codes.js";
import { artifactText, formatTime, isTerminal, messageText, renderMessage, stateName, styledState } from "./render.js";

/**
 * Shows a task stream (SendStreamingMessage, SubscribeToTask) as it happens: state changes,
 * the agent's progress messages, artifact text as it streams, then a summary. In JSON mode
 * every StreamResponse is one JSON Lines record. Ctrl-C cancels the call, not the task.
 */
export async function showStream(ctx: CommandContext, stream: ResponseStream<StreamResponse>, verb: string): Promise<number> {
  const { out } = ctx;
  const started = Date.now();
  let interrupted = false;
  const removeInterrupt = ctx.io.onInterrupt(() => {
    interrupted = true;
    stream.cancel();
  });
  let taskId = "";
  let state = TaskState.UNSPECIFIED;
  let events = 0;
  const artifacts = new Set<string>();
  /** The artifact whose text is being written on the current line. */
  let openArtifact: string | undefined;

  const showState = (next: TaskState, text: string, time: string) => {
    out.endText();
    openArtifact = undefined;
    if (next !== state || text) out.line(`${out.style("dim", time)} ${styledState(out, next)}${text ? `  ${text}` : ""}`);
    state = next;
    out.spin(isTerminal(next) ? "finishing" : `${stateName(next).toLowerCase()}…`);
  };

  out.spin(`${verb}…`);
  try {
    for await (const event of stream) {
      events++;
      if (out.json) {
        out.data(toJson(StreamResponseSchema, event));
        continue;
      }
      const p = event.payload;
      switch (p.case) {
        case "task": {
          taskId = p.value.id;
          out.line(`${out.style("bold", "task")} ${p.value.id}  ${out.style("dim", `context ${p.value.contextId}`)}`);
          for (const a of p.value.artifacts) {
            artifacts.add(a.artifactId);
            out.line(out.style("bold", `── ${a.name || "artifact"}`));
            out.line(artifactText(a.parts));
          }
          const status = p.value.status;
          showState(status?.state ?? TaskState.UNSPECIFIED, messageText(status?.message), formatTime(status?.timestamp));
          break;
        }
        case "statusUpdate": {
          taskId ||= p.value.taskId;
          const status = p.value.status;
          showState(status?.state ?? TaskState.UNSPECIFIED, messageText(status?.message), formatTime(status?.timestamp));
          break;
        }
        case "artifactUpdate": {
          const artifact = p.value.artifact;
          if (!artifact) break;
          artifacts.add(artifact.artifactId);
          if (openArtifact !== artifact.artifactId || !p.value.append) {
            out.endText();
            out.line(out.style("bold", `── ${artifact.name || "artifact"}`) + out.style("dim", ` (${artifact.artifactId})`));
            openArtifact = artifact.artifactId;
          }
          out.text(artifactText(artifact.parts));
          if (p.value.lastChunk) {
            out.endText();
            openArtifact = undefined;
          }
          break;
        }
        case "message":
          out.endText();
          renderMessage(out, p.value);
          break;
      }
    }
  } finally {
    removeInterrupt();
    out.stopSpinner();
    out.endText();
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (interrupted) {
    out.note(`stopped ${verb} after ${seconds} s; the task goes on${taskId ? ` (a2a get ${taskId})` : ""}`);
    return ExitCode.interrupted;
  }
  if (!out.json && taskId) {
    const counts = `${artifacts.size} artifact${artifacts.size === 1 ? "" : "s"}, ${events} event${events === 1 ? "" : "s"}`;
    const how = isTerminal(state) ? "ended" : "stream closed while";
    out.line(out.style("dim", `── ${how} ${stateName(state)} after ${seconds} s · ${counts}`));
  }
  return ExitCode.ok;
}

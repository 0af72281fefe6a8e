import { toJson } from "@bufbuild/protobuf";
import { timestampDate, ValueSchema, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Role, TaskState, type Artifact, type Message, type Part, type Task, type TaskPushNotificationConfig } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { Output, Style } from "./output.js";

/** Human renderings of A2A objects: what a person wants to read, not every field (that is --json). */

const STATE_STYLE: Record<TaskState, Style> = {
  [TaskState.UNSPECIFIED]: "gray",
  [TaskState.SUBMITTED]: "blue",
  [TaskState.WORKING]: "cyan",
  [TaskState.COMPLETED]: "green",
  [TaskState.FAILED]: "red",
  [TaskState.CANCELED]: "yellow",
  [TaskState.INPUT_REQUIRED]: "magenta",
  [TaskState.REJECTED]: "red",
  [TaskState.AUTH_REQUIRED]: "magenta",
};

const TERMINAL = new Set([TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED]);

export function isTerminal(state: TaskState): boolean {
  return TERMINAL.has(state);
}

/** COMPLETED, INPUT_REQUIRED, ... (the enum name without its TASK_STATE_ prefix). */
export function stateName(state: TaskState): string {
  return TaskState[state] ?? String(state);
}

/** Parses a state given on the command line: "working", "TASK_STATE_WORKING", "input-required". */
export function parseState(value: string): TaskState | undefined {
  const key = value
    .toUpperCase()
    .replace(/-/g, "_")
    .replace(/^TASK_STATE_/, "") as keyof typeof TaskState;
  const state = TaskState[key];
  return typeof state === "number" && state !== TaskState.UNSPECIFIED ? state : undefined;
}

export function styledState(out: Output, state: TaskState): string {
  return out.style(STATE_STYLE[state] ?? "gray", out.style("bold", stateName(state)));
}

export function formatTime(ts: Timestamp | undefined): string {
  if (!ts) return "";
  return timestampDate(ts)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z");
}

/** One part as text: text as is, data as JSON, files by name, size and type. */
export function partText(part: Part): string {
  const c = part.content;
  switch (c.case) {
    case "text":
      return c.value;
    case "data":
      return JSON.stringify(toJson(ValueSchema, c.value), null, 2);
    case "url":
      return `[file ${part.filename || c.value}${part.mediaType ? `, ${part.mediaType}` : ""}] ${c.value}`;
    case "raw":
      return `[file ${part.filename || "(unnamed)"}, ${c.value.byteLength} bytes${part.mediaType ? `, ${part.mediaType}` : ""}]`;
    default:
      return "";
  }
}

/** An artifact's parts as one text: text chunks run on (they are pieces of one text), other parts on their own lines. */
export function artifactText(parts: readonly Part[]): string {
  let text = "";
  parts.forEach((part, i) => {
    const isText = part.content.case === "text";
    const prevText = i > 0 && parts[i - 1]!.content.case === "text";
    text += (i > 0 && !(isText && prevText) ? "\n" : "") + partText(part);
  });
  return text;
}

export function messageText(message: Message | undefined): string {
  return message ? message.parts.map(partText).join("\n") : "";
}

function indent(text: string, by = "  "): string {
  return text
    .split("\n")
    .map((l) => by + l)
    .join("\n");
}

export function renderMessage(out: Output, message: Message): void {
  const who = message.role === Role.AGENT ? "agent" : message.role === Role.USER ? "user" : "message";
  out.line(`${out.style("bold", who)}: ${messageText(message)}`);
}

export function renderArtifact(out: Output, artifact: Artifact): void {
  out.line(out.style("bold", `── ${artifact.name || "artifact"} `) + out.style("dim", `(${artifact.artifactId})`));
  if (artifact.description) out.line(out.style("dim", artifact.description));
  out.line(artifactText(artifact.parts));
}

export function renderTask(out: Output, task: Task, options: { history?: boolean } = {}): void {
  const state = task.status?.state ?? TaskState.UNSPECIFIED;
  out.line(`${out.style("bold", "task")} ${task.id}  ${styledState(out, state)}  ${out.style("dim", formatTime(task.status?.timestamp))}`);
  out.line(out.style("dim", `context ${task.contextId}`));
  const status = messageText(task.status?.message);
  if (status) out.line(`${out.style("bold", "status")}: ${status}`);
  for (const artifact of task.artifacts) renderArtifact(out, artifact);
  if (options.history && task.history.length > 0) {
    out.line(out.style("bold", `history (${task.history.length})`));
    for (const m of task.history) out.line(indent(`${m.role === Role.AGENT ? "agent" : "user"}: ${messageText(m)}`));
  }
  if (!isTerminal(state)) out.line(out.style("dim", `a2a watch ${task.id}    # follow it live`));
}

/** One row of `a2a list`. */
export function taskRow(out: Output, task: Task): string {
  const state = task.status?.state ?? TaskState.UNSPECIFIED;
  const pad = stateName(state).padEnd(14);
  const status = messageText(task.status?.message).replace(/\s+/g, " ");
  const short = status.length > 50 ? `${status.slice(0, 49)}…` : status;
  return `${task.id}  ${out.style(STATE_STYLE[state] ?? "gray", pad)}  ${formatTime(task.status?.timestamp).padEnd(20)}  ${out.style("dim", short)}`;
}

export function renderPushConfig(out: Output, config: TaskPushNotificationConfig): void {
  out.line(`${out.style("bold", "push config")} ${config.id}  task ${config.taskId}`);
  out.line(`  url: ${config.url}`);
  if (config.token) out.line(`  token: (set)`);
  if (config.authentication) out.line(`  authentication: ${config.authentication.scheme}${config.authentication.credentials ? " (credentials set)" : ""}`);
}

interface CardJson {
  name?: string;
  description?: string;
  version?: string;
  provider?: { organization?: string; url?: string };
  supportedInterfaces?: Array<{ url?: string; protocolBinding?: string; protocolVersion?: string; tenant?: string }>;
  capabilities?: { streaming?: boolean; pushNotifications?: boolean; extendedAgentCard?: boolean; extensions?: Array<{ uri?: string; required?: boolean }> };
  defaultInputModes?: string[];
  defaultOutputModes?: string[];
  skills?: Array<{ id?: string; name?: string; description?: string; examples?: string[] }>;
}

/** The agent card (ProtoJSON of AgentCard) for people. */
export function renderCard(out: Output, card: CardJson): void {
  out.line(`${out.style("bold", card.name ?? "(no name)")} ${out.style("dim", card.version ? `v${card.version}` : "")}`);
  if (card.description) out.line(card.description);
  if (card.provider?.organization) out.line(out.style("dim", `by ${card.provider.organization}${card.provider.url ? ` (${card.provider.url})` : ""}`));
  for (const itf of card.supportedInterfaces ?? []) {
    out.line(
      `${out.style("bold", "interface")}: ${itf.protocolBinding} ${itf.url} (A2A ${itf.protocolVersion ?? "?"}${itf.tenant ? `, tenant ${itf.tenant}` : ""})`,
    );
  }
  const caps = card.capabilities ?? {};
  const flag = (on: boolean | undefined) => (on ? out.style("green", "yes") : out.style("dim", "no"));
  out.line(
    `${out.style("bold", "capabilities")}: streaming ${flag(caps.streaming)}, push notifications ${flag(caps.pushNotifications)}, extended card ${flag(caps.extendedAgentCard)}`,
  );
  for (const ext of caps.extensions ?? []) out.line(`  extension ${ext.uri}${ext.required ? " (required)" : ""}`);
  if (card.defaultInputModes?.length)
    out.line(
      `${out.style("bold", "input")}: ${card.defaultInputModes.join(", ")}   ${out.style("bold", "output")}: ${(card.defaultOutputModes ?? []).join(", ")}`,
    );
  if (card.skills?.length) out.line(out.style("bold", "skills"));
  for (const skill of card.skills ?? []) {
    out.line(`  ${out.style("cyan", skill.id ?? "")}  ${skill.name && skill.name !== skill.id ? `${skill.name}: ` : ""}${skill.description ?? ""}`);
    for (const example of skill.examples ?? []) out.line(out.style("dim", `      e.g. a2a send ${JSON.stringify(example)}`));
  }
}

import type { Message } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";

/** The behaviours the demo agent knows; the first word of the user's text picks one. */
export type DemoKeyword = "echo" | "story" | "trip" | "long" | "fail" | "reject" | "auth";

export interface DemoCommand {
  readonly keyword: DemoKeyword;
  /** The first text part, trimmed; "" when the message has no text. */
  readonly text: string;
  /** For "long": how many seconds to run, within [1, MAX_LONG_SECONDS]. */
  readonly seconds: number;
}

export const DEFAULT_LONG_SECONDS = 60;
export const MAX_LONG_SECONDS = 600;

/** Words that start a behaviour; anything else is answered with an echo. */
const KEYWORDS: ReadonlyMap<string, DemoKeyword> = new Map([
  ["story", "story"],
  ["chunks", "story"],
  ["trip", "trip"],
  ["long", "long"],
  ["fail", "fail"],
  ["reject", "reject"],
  ["auth", "auth"],
]);

/** The first text part of a message, trimmed; the demo reads text only. */
export function firstText(message: Message): string {
  for (const part of message.parts) {
    if (part.content.case === "text") return part.content.value.trim();
  }
  return "";
}

/** Reads the keyword (case-insensitive, first word, trailing punctuation ignored). */
export function parseDemoCommand(message: Message): DemoCommand {
  const text = firstText(message);
  const [first = "", second] = text.split(/\s+/, 2);
  const word = first.toLowerCase().replace(/[.!?,:;]+$/, "");
  const keyword = KEYWORDS.get(word) ?? "echo";
  return { keyword, text, seconds: keyword === "long" ? parseSeconds(second) : DEFAULT_LONG_SECONDS };
}

function parseSeconds(word: string | undefined): number {
  const n = word === undefined ? NaN : Number.parseInt(word, 10);
  if (!Number.isFinite(n)) return DEFAULT_LONG_SECONDS;
  return Math.min(MAX_LONG_SECONDS, Math.max(1, n));
}

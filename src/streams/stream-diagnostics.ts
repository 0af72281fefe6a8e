import { streamEndedChannel, streamEventChannel, type StreamEndReason } from "../lifecycle/index.js";

/**
 * What streams report on node:diagnostics_channel, for metrics (free when nobody listens: the
 * messages are only built behind `hasSubscribers`).
 *
 * - `a2a:stream:event` `{ merged }` for every response written to a stream; `merged` is true
 *   when it stands for several published events.
 * - `a2a:stream:ended` `{ reason }` once per stream: "budget" (its backlog passed a budget),
 *   "client-gone" (cancel, deadline, dropped connection, shutdown) or "done".
 */
export { streamEndedChannel, streamEventChannel, type StreamEndReason };

const MERGED = Object.freeze({ merged: true });
const SINGLE = Object.freeze({ merged: false });

let open = 0;

/** Task streams (SendStreamingMessage, SubscribeToTask) open right now. */
export function openStreamCount(): number {
  return open;
}

export function streamOpened(): void {
  open++;
}

export function streamEnded(reason: StreamEndReason): void {
  open--;
  if (streamEndedChannel.hasSubscribers) streamEndedChannel.publish({ reason });
}

export function eventWritten(merged: boolean): void {
  if (streamEventChannel.hasSubscribers) streamEventChannel.publish(merged ? MERGED : SINGLE);
}

/** Reads a Server-Sent Events response with eventsource-parser (no hand-written framing). */
import { createParser, type EventSourceMessage } from "eventsource-parser";

export interface SseStream {
  /** The next event, or undefined once the stream has ended. */
  next(): Promise<EventSourceMessage | undefined>;
  /** Every event up to the end. */
  rest(): Promise<EventSourceMessage[]>;
  /** Stops reading and drops the connection (a client that goes away). */
  abandon(): Promise<void>;
}

export function readSse(response: Response): SseStream {
  if (response.body === null) throw new Error("the response has no body");
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const queued: EventSourceMessage[] = [];
  let ended = false;
  const parser = createParser({ onEvent: (event) => queued.push(event) });
  const next = async (): Promise<EventSourceMessage | undefined> => {
    while (queued.length === 0 && !ended) {
      const { done, value } = await reader.read();
      if (done) ended = true;
      else parser.feed(decoder.decode(value, { stream: true }));
    }
    return queued.shift();
  };
  return {
    next,
    async rest() {
      const events: EventSourceMessage[] = [];
      for (let event = await next(); event !== undefined; event = await next()) events.push(event);
      return events;
    },
    abandon: () => reader.cancel(),
  };
}

import type { Answer } from "../ports/answer.js";
import { create } from "@bufbuild/protobuf";
import { StreamResponseSchema, TaskState, type StreamResponse, type Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { TaskEventHub } from "../../events/event-hub.js";
import type { TaskEvent, TaskEventReceiver } from "../../events/task-event.js";
import { artifactUpdateLiteral, statusUpdateLiteral, streamResponseLiteral } from "../model/message-literals.js";
import { withHistoryLength } from "../model/task-view.js";
import { isTerminal } from "../model/task-state.js";
import type { StoredTask } from "../ports/task-repository.js";
import type { EventLogRead } from "../ports/event-log.js";

/** Where a stream's responses go; the protocol edge implements it with flow control. */
export interface StreamSink {
  /** `version`: the task's version after the event (absent for a bare message): what a resume cursor names. */
  next(response: StreamResponse, version?: number): void;
  /** The stream is complete (ruling A-2); no more `next` calls follow. */
  end(): void;
  /** The stream cannot go on (its task's writes were lost): it ends with `error`; nothing follows. */
  fail(error: unknown): void;
}

/** A stream closes after the event that makes its task terminal or INPUT_REQUIRED; it stays open through AUTH_REQUIRED. */
export function closesStream(state: TaskState): boolean {
  return isTerminal(state) || state === TaskState.INPUT_REQUIRED;
}

/**
 * One stream's view of one task: the task first, then its status and artifact updates, in
 * version order with no gap and no duplicate, until the closing rule ends it. Events that
 * arrive while the snapshot is being read are held, then those the snapshot already holds
 * are dropped.
 */
export class TaskFeed implements TaskEventReceiver {
  private unsubscribe: (() => void) | undefined;
  private held: TaskEvent[] | undefined;
  private lastVersion = 0;
  private ended = false;

  constructor(
    private readonly hub: TaskEventHub,
    private readonly sink: StreamSink,
    private readonly historyLength: number | undefined,
  ) {}

  /** For a task about to be created: its "created" event is the snapshot. */
  attachAtCreation(taskId: string): void {
    this.unsubscribe = this.hub.subscribe(taskId, this);
  }

  /** For an existing task: subscribe, read the snapshot, send it, then what followed it. */
  async attachWithSnapshot(taskId: string, read: () => Answer<StoredTask | undefined>): Promise<StoredTask | undefined> {
    this.held = [];
    this.unsubscribe = this.hub.subscribe(taskId, this);
    let stored: StoredTask | undefined;
    try {
      stored = await read();
    } catch (error) {
      this.close();
      throw error;
    }
    if (!stored) {
      this.close();
      return undefined;
    }
    const held = this.held;
    this.held = undefined;
    this.sendTask(stored.task, stored.version);
    if (isTerminal(stored.task.status!.state)) this.finish();
    for (const event of held) this.deliver(event);
    return stored;
  }

  /**
   * Resuming: subscribe, read the events logged after `afterVersion`, send them, then
   * what followed them; no snapshot. Events that arrive while the log is read are held, then
   * those the log already held are dropped (by version), so there is no gap and no duplicate.
   * Anything but found events closes the feed and is returned for the caller to refuse.
   */
  async attachAfter(taskId: string, afterVersion: number, read: () => Promise<EventLogRead>): Promise<EventLogRead> {
    this.held = [];
    this.unsubscribe = this.hub.subscribe(taskId, this);
    let found: EventLogRead;
    try {
      found = await read();
    } catch (error) {
      this.close();
      throw error;
    }
    if (found.kind !== "events") {
      this.close();
      return found;
    }
    const held = this.held!;
    this.held = undefined;
    this.lastVersion = afterVersion;
    for (const event of found.events) this.deliver(event);
    for (const event of held) this.deliver(event);
    return found;
  }

  /** Sends a bare message (a message-only answer) and ends. */
  sendMessageAndEnd(response: StreamResponse): void {
    if (this.ended) return;
    this.sink.next(response);
    this.finish();
  }

  /** Ends the stream with `error` instead of its closing event. */
  fail(error: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.close();
    this.sink.fail(error);
  }

  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.held = undefined;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /**
   * The hub's call: held while a snapshot or the logged events are read, else delivered. A
   * method, not a closure per feed: see TaskEventListener.
   */
  onTaskEvent(event: TaskEvent): void {
    if (this.held !== undefined) this.held.push(event);
    else this.deliver(event);
  }

  private deliver(event: TaskEvent): void {
    if (this.ended || event.version <= this.lastVersion) return;
    this.lastVersion = event.version;
    switch (event.kind) {
      case "created":
        this.sendTask(event.task, event.version);
        return;
      case "status":
        this.sink.next(responseOf(event, this.hub.listenerCount(event.taskId) > 1), event.version);
        if (closesStream(event.status.state)) this.finish();
        return;
      case "artifact":
        this.sink.next(responseOf(event, this.hub.listenerCount(event.taskId) > 1), event.version);
        return;
      case "history":
        return; // history has no stream event of its own; the task snapshot carries it
    }
  }

  private sendTask(task: Task, version: number): void {
    this.lastVersion = Math.max(this.lastVersion, version);
    this.sink.next(create(StreamResponseSchema, { payload: { case: "task", value: withHistoryLength(task, this.historyLength) } }), version);
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.close();
    this.sink.end();
  }
}

type UpdateEvent = Extract<TaskEvent, { kind: "status" | "artifact" }>;

/**
 * An update event's StreamResponse is the same for every stream of the task: build it once per
 * event and share it (with 500 subscribers that is one object instead of 500). Nobody mutates
 * it; it lives as long as the event does. Why the one-entry cache before the WeakMap: the hub
 * gives an event to the task's streams one after the other, and a task with one stream (the
 * usual SendStreamingMessage) then costs no WeakMap entry per event.
 */
const responses = new WeakMap<UpdateEvent, StreamResponse>();
let lastEvent: UpdateEvent | undefined;
let lastResponse: StreamResponse | undefined;

function responseOf(event: UpdateEvent, shared: boolean): StreamResponse {
  if (event === lastEvent) return lastResponse!;
  let response = responses.get(event);
  if (response === undefined) {
    response =
      event.kind === "status"
        ? streamResponseLiteral({ case: "statusUpdate", value: statusUpdateLiteral(event.taskId, event.contextId, event.status) })
        : streamResponseLiteral({
            case: "artifactUpdate",
            value: artifactUpdateLiteral(event.taskId, event.contextId, event.artifact, event.append, event.lastChunk),
          });
    if (shared) responses.set(event, response);
  }
  lastEvent = event;
  lastResponse = response;
  return response;
}

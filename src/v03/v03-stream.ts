import { create } from "@bufbuild/protobuf";
import { StreamResponseSchema, TaskState, type StreamResponse, type Task } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { isTerminal, UnsupportedOperationError } from "../lifecycle/index.js";
import type { StreamWriter } from "../service/face.js";

/*
 * How a v0.3 stream ends, for every v0.3 endpoint (gRPC and HTTP+JSON write v0.3 proto events,
 * JSON-RPC the v0.3 JSON model): v0.3 clients read the stream until a status update says
 * `final: true` (R-V03-32), so a stream that would end on a settled Task snapshot gets that
 * update appended (BQ-18), and a subscription to a finished task, which 1.0 refuses (R-SUB-2), is
 * its snapshot and that update (BQ-19, R-V03-33).
 */

/** R-V03-32, A-2: the stream ends after an event in this state (terminal or INPUT_REQUIRED); its status update says final. */
export function endsV03Stream(state: TaskState): boolean {
  return isTerminal(state) || state === TaskState.INPUT_REQUIRED;
}

/** How an endpoint writes a v0.3 stream: each v1.0 event in its form, and the final status update that closes on a task. */
export interface V03StreamForm<O> {
  event(event: StreamResponse): O;
  finalUpdate(task: Task): O;
}

/** Runs a v1.0 face stream into a v0.3 writer; a stream that ended on a settled Task snapshot gets its final status update. */
export async function streamAsV03<O>(
  out: StreamWriter<O>,
  form: V03StreamForm<O>,
  run: (writer: StreamWriter<StreamResponse>) => Promise<void>,
): Promise<void> {
  const stream = new V03Stream(out, form);
  await run(stream);
  stream.closeOnSettledSnapshot();
}

/**
 * A v1.0 subscription into a v0.3 writer, as streamAsV03; when the face refuses it because the
 * task is finished, the task read by `getTask` (undefined: none to read, the refusal stands) and
 * its final status update.
 */
export async function resubscribeAsV03<O>(
  out: StreamWriter<O>,
  form: V03StreamForm<O>,
  taskId: string,
  run: (writer: StreamWriter<StreamResponse>) => Promise<void>,
  getTask: (() => Promise<Task>) | undefined,
): Promise<void> {
  const stream = new V03Stream(out, form);
  try {
    await run(stream);
  } catch (error) {
    if (stream.wrote || getTask === undefined || !isFinishedTaskRefusal(error, taskId)) throw error;
    stream.write(create(StreamResponseSchema, { payload: { case: "task", value: await getTask() } }));
  }
  stream.closeOnSettledSnapshot();
}

/** The core's refusal to subscribe to a finished task (it names the task and its state), not e.g. streaming being off (R-CAP-2). */
function isFinishedTaskRefusal(error: unknown, taskId: string): boolean {
  return error instanceof UnsupportedOperationError && error.metadata.task_id === taskId && error.metadata.state !== undefined;
}

/** Writes each v1.0 event in the endpoint's v0.3 form, remembering the last. */
class V03Stream<O> implements StreamWriter<StreamResponse> {
  #last: StreamResponse | undefined;

  constructor(
    private readonly out: StreamWriter<O>,
    private readonly form: V03StreamForm<O>,
  ) {}

  get wrote(): boolean {
    return this.#last !== undefined;
  }

  get closed(): boolean {
    return this.out.closed;
  }

  write(event: StreamResponse): boolean {
    this.#last = event;
    return this.out.write(this.form.event(event));
  }

  waitForDrain(): Promise<void> {
    return this.out.waitForDrain();
  }

  /** BQ-18: after a stream that ended normally on a settled Task snapshot, the final status update. */
  closeOnSettledSnapshot(): void {
    const last = this.#last;
    if (last?.payload.case !== "task" || this.out.closed) return;
    if (endsV03Stream(last.payload.value.status?.state ?? TaskState.UNSPECIFIED)) this.out.write(this.form.finalUpdate(last.payload.value));
  }
}

import type { SendMessageRequest, SendMessageResponse } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { AgentRun } from "./agent-run.js";
import { whenAnswered } from "../ports/answer.js";
import { InvalidAgentResponseError, TaskNotFoundError } from "../model/errors.js";
import { sendMessageResponseLiteral } from "../model/message-literals.js";
import { watchGone, type RequestContext } from "../ports/request-context.js";
import type { ReadOptions, StoredTask, TaskRepository } from "../ports/task-repository.js";
import type { RunWriter } from "./agent-run.js";

/**
 * SendMessage's reply once its run has answered: the agent's message, or the task, read once it
 * is settled (unless the request asked not to wait, R-SEND-4), or as it is when its client is
 * gone first. Why its own path and not `await`s in the RPC: the usual call (a new task on the
 * memory store) is answered within the call, and then this makes one promise for the whole reply.
 */
export class SendMessageReply {
  constructor(private readonly repository: TaskRepository) {}

  /** The reply to `request` once `run` has answered. */
  to(rc: RequestContext, request: SendMessageRequest, run: AgentRun): Promise<SendMessageResponse> {
    const outcome = run.answer;
    if (outcome === undefined) return run.outcome.then(() => this.to(rc, request, run));
    try {
      collectExtensions(rc, run);
      if (outcome.kind === "nothing") throw agentGaveNoAnswer();
      if (outcome.kind === "error") throw outcome.error;
      if (outcome.kind === "message") return Promise.resolve(sendMessageResponseLiteral({ case: "message", value: outcome.message }));
      const writer = outcome.writer;
      if (request.configuration?.returnImmediately || writer.settled) return this.#taskNow(rc, request, run, writer);
      return this.#taskWhenSettled(rc, request, run, writer);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The task reply once the task is settled, or its client is gone (the reply then holds the
   * task as it is, and will likely not be read; the task goes on). Why a callback on the writer
   * and not a promise to await: one promise per blocking call instead of three.
   */
  #taskWhenSettled(rc: RequestContext, request: SendMessageRequest, run: AgentRun, writer: RunWriter): Promise<SendMessageResponse> {
    return new Promise<SendMessageResponse>((resolve, reject) => {
      let stopWatching: (() => void) | undefined;
      let ended = false;
      const end = () => {
        if (ended) return; // settled and gone both call it
        ended = true;
        stopWatching?.();
        stopWatching = undefined;
        try {
          resolve(this.#readTask(rc, request, run, writer));
        } catch (error) {
          reject(error);
        }
      };
      writer.onSettled(end);
      if (!ended) stopWatching = watchGone(rc, end);
    });
  }

  /**
   * The task reply, read as the task is now: on a store that commits later (group commit), once
   * the commit that holds the writes made so far ended. Why not read at once: the read would commit
   * the open batch then and there, so concurrent calls (a client starting many tasks) each paid a
   * commit of their own; waiting lets them share one.
   */
  #taskNow(rc: RequestContext, request: SendMessageRequest, run: AgentRun, writer: RunWriter): Promise<SendMessageResponse> {
    const afterCommit = this.repository.afterCommit;
    if (afterCommit !== undefined && !writer.settled) {
      return new Promise<SendMessageResponse>((resolve, reject) =>
        afterCommit(() => {
          try {
            resolve(this.#readTask(rc, request, run, writer));
          } catch (error) {
            reject(error);
          }
        }),
      );
    }
    try {
      return Promise.resolve(this.#readTask(rc, request, run, writer));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The task reply, once read from the store: within the call, without a promise, on a store that
   * answers at once. Throws (or rejects) when it cannot be given.
   */
  #readTask(rc: RequestContext, request: SendMessageRequest, run: AgentRun, writer: RunWriter): SendMessageResponse | Promise<SendMessageResponse> {
    const options: ReadOptions = { historyLength: request.configuration?.historyLength };
    return whenAnswered(this.repository.get(rc.caller, writer.taskId, options), (stored) => taskResponse(rc, run, writer, stored));
  }
}

/** SendMessage's reply holding the task as read, unless its writes were lost or it is gone. */
function taskResponse(rc: RequestContext, run: AgentRun, writer: RunWriter, stored: StoredTask | undefined): SendMessageResponse {
  collectExtensions(rc, run);
  if (writer.commitFailure !== undefined) throw writer.commitFailure; // the store could not commit what the agent wrote
  if (!stored) throw new TaskNotFoundError(writer.taskId);
  return sendMessageResponseLiteral({ case: "task", value: stored.task });
}

/** The extensions the run activated, handed to the edge to echo (R-EXT-5). */
export function collectExtensions(rc: RequestContext, run: AgentRun): void {
  if (run.activated.size === 0) return; // the usual case: no iterator to make
  for (const uri of run.activated) rc.activatedExtensions.add(uri);
}

export function agentGaveNoAnswer(): InvalidAgentResponseError {
  return new InvalidAgentResponseError("the agent ended without answering: it sent neither a message nor a task");
}

import { clone, create } from "@bufbuild/protobuf";
import {
  ListTaskPushNotificationConfigsResponseSchema,
  TaskPushNotificationConfigSchema,
  type ListTaskPushNotificationConfigsResponse,
  type TaskPushNotificationConfig,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { type Caller, InvalidRequestError, TaskNotFoundError, newId, type PageTokenCodec, type TaskRepository } from "../lifecycle/index.js";
import { PushConfigLimitError, type PushConfigStore, type PushProtocolVersion } from "./ports/push-config-store.js";

export interface PushConfigServiceOptions {
  readonly repository: TaskRepository;
  readonly store: PushConfigStore;
  readonly pageTokens: PageTokenCodec;
  /** Most configs one task may have (A2A_PUSH_MAX_CONFIGS_PER_TASK). */
  readonly maxPerTask: number;
}

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;

/**
 * The four push config RPCs (R-PUSH-2..6) and the inline config of SendMessage (R-SEND-7),
 * on the caller's own tasks only (A-31: another principal's task is TASK_NOT_FOUND). Requests
 * arrive validated, their URL vetted by the destination guard.
 */
export class PushConfigService {
  constructor(private readonly options: PushConfigServiceOptions) {}

  /**
   * A-8: the id is assigned when empty; an existing id is replaced. Terminal tasks are accepted too.
   * `protocolVersion`: the generation of the call, kept with the config for its webhooks' shape (R-V03-70).
   */
  async create(caller: Caller, request: TaskPushNotificationConfig, protocolVersion?: PushProtocolVersion): Promise<TaskPushNotificationConfig> {
    const config = this.stored(caller, request);
    try {
      await this.options.store.put(caller, config, { maxPerTask: this.options.maxPerTask, protocolVersion });
    } catch (error) {
      throw limitAsInvalid(error);
    }
    return config;
  }

  /** a missing config is TASK_NOT_FOUND, its message naming the config. */
  async get(caller: Caller, taskId: string, configId: string): Promise<TaskPushNotificationConfig> {
    await this.requireTask(caller, taskId);
    const config = await this.options.store.get(caller, taskId, configId);
    if (config === undefined) throw new TaskNotFoundError(taskId, `push config ${JSON.stringify(configId)} of task ${JSON.stringify(taskId)} was not found`);
    return config;
  }

  /** R-PUSH-4: every config of the task, by id, in pages (page_size 0 = 50, at most 100). */
  async list(caller: Caller, taskId: string, pageSize: number, pageToken: string): Promise<ListTaskPushNotificationConfigsResponse> {
    await this.requireTask(caller, taskId);
    const filters = `push-configs:${taskId}`;
    const afterId = pageToken === "" ? undefined : this.options.pageTokens.decode(pageToken, filters).taskId;
    const limit = Math.min(pageSize === 0 ? DEFAULT_PAGE_SIZE : pageSize, MAX_PAGE_SIZE);
    const found = await this.options.store.list(caller, taskId, { limit: limit + 1, afterId });
    const more = found.length > limit;
    if (more) found.length = limit;
    const last = found[found.length - 1];
    return create(ListTaskPushNotificationConfigsResponseSchema, {
      configs: found,
      nextPageToken: more && last ? this.options.pageTokens.encode({ statusMicros: 0, taskId: last.id }, filters) : "",
    });
  }

  /** R-PUSH-5, A-7: idempotent on an existing task; TASK_NOT_FOUND on a missing one. */
  async delete(caller: Caller, taskId: string, configId: string): Promise<void> {
    await this.requireTask(caller, taskId);
    await this.options.store.delete(caller, taskId, configId);
  }

  /**
   * R-SEND-7: the config inline in SendMessage, for the task the call creates or continues; it
   * gets the task as it is first. Within the call on a store that can (a new task's
   * config then commits with the task); otherwise once stored.
   */
  attachInline(caller: Caller, taskId: string, inline: TaskPushNotificationConfig, protocolVersion?: PushProtocolVersion): Promise<void> | undefined {
    const config = this.stored(caller, inline, taskId);
    const options = { maxPerTask: this.options.maxPerTask, snapshot: true, protocolVersion };
    const answer = this.options.store.put(caller, config, options);
    return answer instanceof Promise
      ? answer.catch((error: unknown) => {
          throw limitAsInvalid(error);
        })
      : undefined;
  }

  private stored(caller: Caller, request: TaskPushNotificationConfig, taskId = request.taskId): TaskPushNotificationConfig {
    const config = clone(TaskPushNotificationConfigSchema, request);
    config.taskId = taskId;
    config.tenant = caller.tenant;
    if (config.id === "") config.id = newId();
    return config;
  }

  private async requireTask(caller: Caller, taskId: string): Promise<void> {
    if ((await this.options.repository.get(caller, taskId, { historyLength: 0 })) === undefined) throw new TaskNotFoundError(taskId);
  }
}

function limitAsInvalid(error: unknown): unknown {
  if (!(error instanceof PushConfigLimitError)) return error;
  return InvalidRequestError.field("task_id", error.message);
}

import type * as grpc from "@grpc/grpc-js";
import type {
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  TaskPushNotificationConfig,
} from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import type { Resolver } from "../../src/push/index.js";
import { unary } from "../foundation/helpers.js";
import type { A2ATestServer } from "../support/a2a-server.js";
import type { Call } from "../e2e/e2e-helpers.js";

/** The four push config RPCs of a test server (ts-proto client), with a2a-version 1.0 unless `md` is given. */
export function pushRpc(s: A2ATestServer) {
  const c = s.client;
  return {
    create: (req: Partial<TaskPushNotificationConfig> & { taskId: string }, md = s.metadata()): Promise<Call<TaskPushNotificationConfig>> =>
      unary(c, c.createTaskPushNotificationConfig, pushConfig(req), md),
    get: (req: Partial<GetTaskPushNotificationConfigRequest> & { taskId: string; id: string }, md = s.metadata()): Promise<Call<TaskPushNotificationConfig>> =>
      unary(c, c.getTaskPushNotificationConfig, { tenant: "", ...req }, md),
    list: (
      req: Partial<ListTaskPushNotificationConfigsRequest> & { taskId: string },
      md = s.metadata(),
    ): Promise<Call<ListTaskPushNotificationConfigsResponse>> =>
      unary(c, c.listTaskPushNotificationConfigs, { tenant: "", pageSize: 0, pageToken: "", ...req }, md),
    delete: (req: Partial<DeleteTaskPushNotificationConfigRequest> & { taskId: string; id: string }, md = s.metadata()): Promise<Call<unknown>> =>
      unary(c, c.deleteTaskPushNotificationConfig, { tenant: "", ...req }, md),
  };
}

export function pushConfig(extra: Partial<TaskPushNotificationConfig> & { taskId?: string }): TaskPushNotificationConfig {
  return { tenant: "", id: "", taskId: "", url: "https://hooks.example/a2a", token: "", authentication: undefined, ...extra };
}

/**
 * The only resolver push tests use: `*.test` names resolve to loopback receivers, everything
 * else fails as an unknown name. So no test can reach a real address through DNS.
 */
export function loopbackResolver(names: Record<string, string> = {}): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const address = names[hostname];
    if (address === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return [{ address, family: address.includes(":") ? (6 as const) : (4 as const) }];
  };
  return Object.assign(resolve, { calls });
}

export type { grpc };

/**
 * The google.api.http path templates the HTTP+JSON router is built from (R-HTTP-2, R-HTTP-3),
 * including the shapes only the v0.3 proto uses (`{name=tasks/*}`), so that a v0.3 binding can
 * run on the same router.
 */
import { REST_V1_ROUTER } from "../../src/rest/index.js";
import { matchPathTemplate, parsePathTemplate, splitRequestPath } from "../../src/rest/path-template.js";

const match = (template: string, path: string) => matchPathTemplate(parsePathTemplate(template), splitRequestPath(path)!);

test("R-HTTP-2: a variable is one percent-decoded segment; a custom verb must be there, unencoded", () => {
  expect(match("/tasks/{id=*}:cancel", "/tasks/t%2F1:cancel")).toEqual({ id: "t/1" });
  expect(match("/tasks/{id=*}:cancel", "/tasks/t1%3Acancel")).toBeUndefined();
  expect(match("/tasks/{id=*}", "/tasks/t1/x")).toBeUndefined();
  expect(match("/tasks/{id=*}", "/tasks/")).toBeUndefined();
  expect(match("/tasks/{id=*}", "/tasks/%zz")).toBeUndefined(); // a broken escape matches nothing, never throws
  expect(match("/{tenant}/message:send", "/acme/message:send")).toEqual({ tenant: "acme" });
});

test("v0.3 shapes: a variable over a sub-pattern binds the matched segments joined by '/'", () => {
  expect(match("/v1/{name=tasks/*}", "/v1/tasks/t1")).toEqual({ name: "tasks/t1" });
  expect(match("/v1/{name=tasks/*/pushNotificationConfigs/*}", "/v1/tasks/t1/pushNotificationConfigs/c1")).toEqual({
    name: "tasks/t1/pushNotificationConfigs/c1",
  });
  expect(match("/v1/{parent=tasks/*}/pushNotificationConfigs", "/v1/tasks/t1/pushNotificationConfigs")).toEqual({ parent: "tasks/t1" });
  expect(match("/v1/{name=tasks/*}:subscribe", "/v1/tasks/t1:subscribe")).toEqual({ name: "tasks/t1" });
  expect(match("/v1/{name=tasks/*}", "/v1/other/t1")).toBeUndefined();
  expect(() => parsePathTemplate("/v1/{name=**}")).toThrow(/unsupported/);
});

test("R-HTTP-1, R-HTTP-3: the v1.0 router has all 22 annotated routes (+ BQ-7's POST subscribe); literals and verbs win", () => {
  expect(REST_V1_ROUTER.routes.length).toBe(24);
  const at = (method: string, path: string) => {
    const found = REST_V1_ROUTER.match(method, path);
    return found.kind === "route" ? [found.route.method.name, found.variables] : [found.kind];
  };
  expect(at("GET", "/tasks/tasks")).toEqual(["GetTask", { id: "tasks" }]);
  expect(at("GET", "/acme/tasks")).toEqual(["ListTasks", { tenant: "acme" }]);
  expect(at("POST", "/tasks/message:send")).toEqual(["SendMessage", { tenant: "tasks" }]);
  expect(at("GET", "/tasks/t1:subscribe")).toEqual(["SubscribeToTask", { id: "t1" }]);
  expect(at("POST", "/tasks/t1:subscribe")).toEqual(["SubscribeToTask", { id: "t1" }]);
  expect(at("GET", "/tasks/t1:cancel")).toEqual(["wrong-method"]);
  expect(at("DELETE", "/acme/tasks/t1/pushNotificationConfigs/c1")).toEqual(["DeleteTaskPushNotificationConfig", { tenant: "acme", task_id: "t1", id: "c1" }]);
  expect(at("GET", "/")).toEqual(["none"]);
});

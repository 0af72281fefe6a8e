/**
 * The official @a2a-js/sdk client against our server with JWT authentication on: it
 * discovers the card (which declares the bearer scheme), sends its token as a service
 * parameter, and gets the A2A answers; without a token it gets UNAUTHENTICATED.
 */
import { TaskState, type Task } from "@a2a-js/sdk";
import { makeIssuer, type TestIssuer } from "../auth/auth-support.js";
import { rejection, sendRequest, startSdkSetup, type SdkSetup } from "./sdk-client.js";

let issuer: TestIssuer;
let setup: SdkSetup;
beforeAll(async () => {
  issuer = await makeIssuer("ES256");
  setup = await startSdkSetup({ env: issuer.env() });
});
afterAll(async () => {
  await setup.close();
  issuer.remove();
});

test("A-30 R-CARD-8: the card the SDK discovers declares the bearer JWT scheme", async () => {
  const card = await setup.client.getAgentCard();
  expect(card.securitySchemes["bearer"]?.scheme).toMatchObject({ $case: "httpAuthSecurityScheme", value: { scheme: "Bearer", bearerFormat: "JWT" } });
  expect(card.securityRequirements.map((r) => Object.keys(r.schemes))).toEqual([["bearer"]]);
});

test("A-30: the SDK client with a token gets its task, and its own task back from GetTask", async () => {
  const token = await issuer.token({ sub: "sdk-user" });
  const options = { serviceParameters: { authorization: `Bearer ${token}` } };
  const result = await setup.client.sendMessage(sendRequest("story"), options);
  expect("status" in result).toBe(true);
  const task = result as Task;
  expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  const again = await setup.client.getTask({ tenant: "", id: task.id }, options);
  expect(again.id).toBe(task.id);
});

test("A-30: the SDK client without a token is refused with UNAUTHENTICATED", async () => {
  const error = await rejection(setup.client.sendMessage(sendRequest("hello sdk")));
  expect(String(error.message)).toMatch(/authentication|UNAUTHENTICATED|authorization: Bearer/i);
});

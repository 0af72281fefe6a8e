import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { setTimeout as delay } from "node:timers/promises";
import { join } from "node:path";
import { dispatchAgent, rpc, sendForTask, sendRequest, userMessage } from "../e2e/e2e-helpers.js";
import { loopbackResolver, pushConfig } from "../push/push-helpers.js";
import { startReceiver } from "../push/receiver.js";
import { until } from "../foundation/helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { streamSend, sendRequest as streamRequest } from "../streaming/support.js";
import { EVENT_LOOP_SAMPLE_MS } from "../../src/observability/metrics-catalogue.js";
import { metricTypes, parsePrometheusText, sampleValue, scrape, type Sample } from "../support/prometheus-text.js";

const behaviours = dispatchAgent();
const complete = behaviours.on(async (ctx) => {
  await ctx.working();
  await ctx.complete("done");
});
const ask = behaviours.on(async (ctx) => {
  await ctx.working();
  await ctx.requireInput("which one?");
});
const crash = behaviours.on(async (ctx) => {
  await ctx.working();
  throw new Error("the agent broke");
});
const answer = behaviours.on(async (ctx) => {
  await ctx.reply("a message, no task");
});

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "a2a-metrics-"));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

async function withServer(env: Record<string, string>, body: (s: A2ATestServer) => Promise<void>): Promise<void> {
  const s = await startA2AServer({ agent: behaviours.agent, env: { A2A_CARD_LISTEN: "127.0.0.1:0", A2A_STORE: "sqlite", A2A_DATA_DIR: dataDir, ...env } });
  try {
    await body(s);
  } finally {
    await s.close();
  }
}

async function metricsOf(port: number): Promise<{ samples: Sample[]; text: string }> {
  const { status, contentType, body } = await scrape(`http://127.0.0.1:${port}/metrics`);
  expect({ status, contentType }).toEqual({ status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8" });
  return { samples: parsePrometheusText(body), text: body };
}

/** Histogram buckets of one series: cumulative, ending with +Inf = _count. */
function expectConsistentHistogram(samples: Sample[], name: string, labels: Record<string, string>): number {
  const buckets = samples.filter((s) => s.name === `${name}_bucket` && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  expect(buckets.length).toBeGreaterThan(3);
  for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value);
  const count = sampleValue(samples, `${name}_count`, labels);
  expect(buckets.at(-1)!.labels.le).toBe("+Inf");
  expect(buckets.at(-1)!.value).toBe(count);
  return count!;
}

describe("Prometheus metrics at /metrics", () => {
  test("OBS-METRICS: after real calls, the task, agent run and store metrics count what happened", async () => {
    await withServer({}, async (s) => {
      const send = (word: string) => rpc(s).send(sendRequest(userMessage(`${word} please`)));
      for (let i = 0; i < 3; i++) expect((await send(complete)).error).toBeUndefined();
      expect((await send(ask)).error).toBeUndefined();
      expect((await send(crash)).error).toBeUndefined(); // the task comes back FAILED
      expect((await send(answer)).error).toBeUndefined();
      await until(() => s.app.service.runningCount === 0, "the runs to end");

      // A client error: NOT_FOUND (5).
      expect((await rpc(s).get({ id: "no-such-task" })).error!.code).toBe(5);
      // The event-loop lag sampler's first tick only marks the time: let a few pass.
      await delay(EVENT_LOOP_SAMPLE_MS * 3);

      const { samples, text } = await metricsOf(s.app.metricsPort!);
      expect(s.app.metricsPort).toBe(s.app.cardPort);

      // RPCs by method and status code, from the call seam.
      const sendOk = { rpc_service: "lf.a2a.v1.A2AService", rpc_method: "SendMessage", rpc_grpc_status_code: "0" };
      expect(expectConsistentHistogram(samples, "rpc_server_call_duration_seconds", sendOk)).toBe(6);
      const sendSum = sampleValue(samples, "rpc_server_call_duration_seconds_sum", sendOk)!;
      expect(sendSum).toBeGreaterThan(0);
      expect(sendSum).toBeLessThan(10);
      // Each call lands in the buckets at or above its duration: the 10 s bucket holds all six.
      expect(sampleValue(samples, "rpc_server_call_duration_seconds_bucket", { ...sendOk, le: "10" })).toBe(6);
      expect(expectConsistentHistogram(samples, "rpc_server_call_duration_seconds", { rpc_method: "GetTask", rpc_grpc_status_code: "5" })).toBe(1);
      expect(sampleValue(samples, "rpc_server_call_duration_seconds_count", { rpc_method: "GetTask", rpc_grpc_status_code: "0" })).toBeUndefined();
      expect(sampleValue(samples, "rpc_server_active_calls", { rpc_method: "SendMessage" })).toBe(0);
      expect(sampleValue(samples, "a2a_tasks_created_total")).toBe(5);
      expect(sampleValue(samples, "a2a_tasks_settled_total", { state: "completed" })).toBe(3);
      expect(sampleValue(samples, "a2a_tasks_settled_total", { state: "input_required" })).toBe(1);
      expect(sampleValue(samples, "a2a_tasks_settled_total", { state: "failed" })).toBe(1);
      expect(sampleValue(samples, "a2a_tasks_settled_total", { state: "canceled" })).toBe(0);
      expect(sampleValue(samples, "a2a_agent_runs_active")).toBe(0);
      expect(expectConsistentHistogram(samples, "a2a_agent_run_duration_seconds", { outcome: "ok" })).toBe(5);
      expect(expectConsistentHistogram(samples, "a2a_agent_run_duration_seconds", { outcome: "error" })).toBe(1);

      // Every write of the five tasks went through a group commit: 3 x (create, working, completed),
      // 1 x (create, working, input-required), 1 x (create, working, failed) = 15 writes.
      const commits = expectConsistentHistogram(samples, "a2a_store_commit_writes", { store: "sqlite" });
      expect(commits).toBeGreaterThanOrEqual(5);
      expect(sampleValue(samples, "a2a_store_commit_writes_sum", { store: "sqlite" })).toBe(15);
      expect(expectConsistentHistogram(samples, "a2a_store_commit_duration_seconds", { store: "sqlite" })).toBe(commits);
      expect(sampleValue(samples, "a2a_store_commits_failed_total", { store: "sqlite" }) ?? 0).toBe(0);

      // Producers that are not part of this call path yet: registered, at zero.
      for (const outcome of ["delivered", "retrying", "gave-up", "removed", "refused"]) {
        expect(sampleValue(samples, "a2a_push_deliveries_total", { outcome })).toBe(0);
      }
      expect(sampleValue(samples, "a2a_push_pending")).toBe(0);
      expect(sampleValue(samples, "a2a_streams_ended_total", { reason: "budget" })).toBe(0);
      expect(sampleValue(samples, "a2a_streams_open")).toBe(0);

      // The default process metrics, event-loop lag among them.
      expect(sampleValue(samples, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
      expect(sampleValue(samples, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
      expect(metricTypes(text).get("nodejs_eventloop_lag_seconds")).toBe("gauge");
      expect(sampleValue(samples, "nodejs_eventloop_lag_p99_seconds")).toBeGreaterThan(0);

      // Labels stay bounded: no task or context id anywhere in a scrape.
      const { response } = await send(complete);
      const task = response!.payload!.$case === "task" ? response!.payload!.value : undefined;
      const after = (await scrape(`http://127.0.0.1:${s.app.metricsPort}/metrics`)).body;
      expect(after).not.toContain(task!.id);
      expect(after).not.toContain(task!.contextId);
      expect(sampleValue(parsePrometheusText(after), "a2a_tasks_created_total")).toBe(6);
      expect(sampleValue(parsePrometheusText(after), "rpc_server_call_duration_seconds_count", sendOk)).toBe(7);
    });
  });

  test("OBS-METRICS: the event-loop lag metrics see the loop blocked for 150 ms while the service works, sampled every EVENT_LOOP_SAMPLE_MS", async () => {
    expect(EVENT_LOOP_SAMPLE_MS).toBeLessThanOrEqual(50); // a lag is seen to within this, well inside the 200 ms alert
    await withServer({}, async (s) => {
      await metricsOf(s.app.metricsPort!); // a scrape starts the lag histogram afresh
      // A call, then the loop blocked while the sampler runs.
      expect((await rpc(s).send(sendRequest(userMessage(`${complete} please`)))).error).toBeUndefined();
      await delay(EVENT_LOOP_SAMPLE_MS * 2);
      const blockedUntil = performance.now() + 150;
      while (performance.now() < blockedUntil); // the server shares this process's event loop
      await delay(EVENT_LOOP_SAMPLE_MS * 2);
      const { samples } = await metricsOf(s.app.metricsPort!);
      expect(sampleValue(samples, "nodejs_eventloop_lag_max_seconds")).toBeGreaterThanOrEqual(0.1);
      expect(sampleValue(samples, "nodejs_eventloop_lag_p99_seconds")).toBeGreaterThanOrEqual(0.1);
    });
  });

  test("OBS-METRICS: push deliveries count by outcome after real webhook requests, with their duration", async () => {
    // The first request is refused with 503 (retried), the rest accepted: five events, six attempts.
    const receiver = await startReceiver({ answer: (_req, n) => ({ status: n === 0 ? 503 : 204 }) });
    const s = await startA2AServer({
      agent: behaviours.agent,
      env: {
        A2A_CARD_LISTEN: "127.0.0.1:0",
        A2A_STORE: "sqlite",
        A2A_DATA_DIR: dataDir,
        A2A_PUSH_ALLOW_HOSTS: "127.0.0.1",
        A2A_PUSH_ALLOW_HTTP: "true",
        A2A_PUSH_BACKOFF_MS: "20",
        A2A_PUSH_MAX_BACKOFF_MS: "50",
      },
      pushResolver: loopbackResolver(),
    });
    try {
      await sendForTask(s, userMessage(`${complete} please`), { taskPushNotificationConfig: pushConfig({ url: receiver.url("/hook") }) });
      await receiver.waitFor(4); // snapshot, working, completed (plus the refused first attempt)
      // The receiver has answered; the delivery is counted once its attempt has ended on our side.
      let samples: Sample[] = [];
      for (let tries = 0; tries < 100; tries++) {
        samples = (await metricsOf(s.app.metricsPort!)).samples;
        if (sampleValue(samples, "a2a_push_deliveries_total", { outcome: "delivered" }) === 3) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(sampleValue(samples, "a2a_push_deliveries_total", { outcome: "delivered" })).toBe(3);
      expect(sampleValue(samples, "a2a_push_deliveries_total", { outcome: "retrying" })).toBe(1);
      for (const outcome of ["gave-up", "removed", "refused"]) expect(sampleValue(samples, "a2a_push_deliveries_total", { outcome })).toBe(0);
      expect(expectConsistentHistogram(samples, "a2a_push_delivery_duration_seconds", {})).toBe(4);
    } finally {
      await s.close();
      await receiver.close();
    }
  });

  test("OBS-METRICS: a stream counts its written responses, and its end by reason; the open-stream gauge returns to 0", async () => {
    await withServer({ A2A_STORE: "memory" }, async (s) => {
      const stream = streamSend(s, streamRequest(`${complete} stream`));
      const end = await stream.ended;
      expect(end.code).toBe(0);
      await until(() => s.app.service.runningCount === 0, "the run to end");
      const { samples } = await metricsOf(s.app.metricsPort!);
      expect(sampleValue(samples, "a2a_stream_events_written_total")).toBe(stream.received);
      expect(stream.received).toBeGreaterThanOrEqual(2);
      expect(sampleValue(samples, "a2a_streams_ended_total", { reason: "done" })).toBe(1);
      expect(sampleValue(samples, "a2a_streams_ended_total", { reason: "budget" })).toBe(0);
      expect(sampleValue(samples, "a2a_streams_open")).toBe(0);
      expect(sampleValue(samples, "rpc_server_call_duration_seconds_count", { rpc_method: "SendStreamingMessage", rpc_grpc_status_code: "0" })).toBe(1);
    });
  });

  test("OBS-METRICS: /metrics shares the card listener by default; the card is still served, and only GET/HEAD are answered", async () => {
    await withServer({}, async (s) => {
      const base = `http://127.0.0.1:${s.app.cardPort}`;
      expect((await scrape(`${base}/.well-known/agent-card.json`)).status).toBe(200);
      const head = await fetch(`${base}/metrics`, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe("");
      const post = await fetch(`${base}/metrics`, { method: "POST", body: "x" });
      expect({ status: post.status, allow: post.headers.get("allow") }).toEqual({ status: 405, allow: "GET, HEAD" });
      // Not a public document like the card: no CORS grant.
      expect(head.headers.get("access-control-allow-origin")).toBeNull();
    });
  });

  test("OBS-METRICS: A2A_METRICS_LISTEN moves /metrics to a listener of its own; off turns metrics off", async () => {
    await withServer({ A2A_METRICS_LISTEN: "127.0.0.1:0" }, async (s) => {
      expect(s.app.metricsPort).not.toBe(s.app.cardPort);
      await rpc(s).send(sendRequest(userMessage(`${complete} please`)));
      expect(sampleValue((await metricsOf(s.app.metricsPort!)).samples, "a2a_tasks_created_total")).toBe(1);
      expect((await scrape(`http://127.0.0.1:${s.app.cardPort}/metrics`)).status).toBe(404);
      expect((await scrape(`http://127.0.0.1:${s.app.metricsPort}/other`)).status).toBe(404);
    });
    await withServer({ A2A_METRICS_LISTEN: "off" }, async (s) => {
      expect(s.app.metrics).toBeUndefined();
      expect(s.app.metricsPort).toBeUndefined();
      expect((await scrape(`http://127.0.0.1:${s.app.cardPort}/metrics`)).status).toBe(404);
    });
    await withServer({ A2A_CARD_LISTEN: "off" }, async (s) => {
      // Nowhere to serve them: not collected at all.
      expect(s.app.metrics).toBeUndefined();
    });
  });
});

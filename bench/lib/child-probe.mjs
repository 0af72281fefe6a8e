/**
 * Preloaded into every benchmarked server process (`node --import <this file> ...`).
 * It answers the parent over the fork() IPC channel, so the server's own CPU time and
 * memory are read from inside it, apart from the load client's:
 *   { id, cmd: "usage" } -> { id, cpu: process.cpuUsage(), mem: process.memoryUsage(), spaces: v8.getHeapSpaceStatistics() }
 *   { id, cmd: "gc" }    -> the same, after forced full GCs (needs --expose-gc)
 *   { id, cmd: "profileStart" } / { id, cmd: "profileStop", file } -> V8 CPU profile of
 *     exactly the calls in between, written to `file` (.cpuprofile, opens in Chrome DevTools)
 * Plain JavaScript so that it loads into any server, compiled or not, without tsx.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import v8 from "node:v8";

let session;

function profile(msg) {
  const reply = (extra) => process.send({ id: msg.id, cpu: process.cpuUsage(), mem: process.memoryUsage(), ...extra });
  const fail = (err) => process.send({ id: msg.id, error: String(err?.message ?? err) });
  if (msg.cmd === "heapSampleStart") {
    session ??= new Session();
    session.connect();
    // Every allocation's stack, including objects the GC has already collected: where garbage comes from.
    // A2A_PROBE_SURVIVORS=1: only what outlived a scavenge (what gets promoted).
    session.post(
      "HeapProfiler.startSampling",
      { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: process.env.A2A_PROBE_SURVIVORS !== "1" },
      (e) => (e ? fail(e) : reply({})),
    );
    return;
  }
  if (msg.cmd === "heapSampleStop") {
    session.post("HeapProfiler.stopSampling", (err, result) => {
      if (err) return fail(err);
      writeFileSync(msg.file, JSON.stringify(result.profile));
      session.disconnect();
      reply({ file: msg.file });
    });
    return;
  }
  if (msg.cmd === "profileStart") {
    session ??= new Session();
    session.connect();
    session.post("Profiler.enable", (err) => {
      if (err) return fail(err);
      // 100 µs sampling: fine enough for calls that cost tens of µs.
      session.post("Profiler.setSamplingInterval", { interval: 100 }, () => session.post("Profiler.start", (e) => (e ? fail(e) : reply({}))));
    });
  } else {
    session.post("Profiler.stop", (err, result) => {
      if (err) return fail(err);
      writeFileSync(msg.file, JSON.stringify(result.profile));
      session.disconnect();
      reply({ file: msg.file });
    });
  }
}

if (typeof process.send === "function") {
  process.on("message", (msg) => {
    if (msg === null || typeof msg !== "object" || typeof msg.id !== "number") return;
    if (msg.cmd === "profileStart" || msg.cmd === "profileStop" || msg.cmd === "heapSampleStart" || msg.cmd === "heapSampleStop") return profile(msg);
    if (msg.cmd === "gc") {
      if (typeof globalThis.gc !== "function") {
        process.send({ id: msg.id, error: "run the server with --expose-gc" });
        return;
      }
      // Several passes: the first ones only schedule finalizers and weak callbacks.
      for (let i = 0; i < 4; i++) globalThis.gc();
    } else if (msg.cmd !== "usage") {
      process.send({ id: msg.id, error: `unknown command ${String(msg.cmd)}` });
      return;
    }
    process.send({ id: msg.id, cpu: process.cpuUsage(), mem: process.memoryUsage(), spaces: v8.getHeapSpaceStatistics() });
  });
  // The IPC channel must not keep a server alive that is otherwise shutting down.
  process.channel?.unref();
}

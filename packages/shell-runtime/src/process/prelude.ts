import { CLOSE_FDS_VAR } from '../confine/confiner.ts'
import { CGROUP_PROCS_VAR } from '../tree/cgroup-keeper.ts'

/** The variable telling the prelude to report the last pipeline's stage statuses on fd 3. */
export const PIPESTATUS_VAR = 'HANDS_PIPESTATUS'
/** The descriptor the pipestatus pipe arrives on (a job keeps it open: see JobSpec.keepFds). */
export const PIPESTATUS_PIPE_FD = 3
/** The descriptor the prelude keeps the pipestatus pipe on (moved off fd 3, so fd 3 is free for the command). */
export const PIPESTATUS_FD = 99

/**
 * The script every job's first bash sources through BASH_ENV before it reads its command, so the
 * command line itself runs exactly as `bash -c` would run it. Without the confinement helper it
 * joins the job's cgroup (before anything can fork) and closes every descriptor the job would
 * inherit beyond its standard streams and the ones listed; for shell_run it reports the last
 * pipeline's statuses at exit on an inherited pipe, never through a file a command could write.
 * It unsets BASH_ENV and its own variables, so nothing leaks to the bash scripts a command starts.
 * The file lives in the session's spool, which confined commands cannot write.
 */
export const PRELUDE = `# hands: sourced once by each job's first bash, then forgotten.
unset BASH_ENV
if [ -n "\${${CGROUP_PROCS_VAR}-}" ]; then
  while IFS= read -r __hands_procs; do
    { echo $$ > "$__hands_procs"; } 2>/dev/null || { echo "hands: could not join the job's cgroup $__hands_procs" >&2; exit 125; }
  done <<< "\$${CGROUP_PROCS_VAR}"
  unset ${CGROUP_PROCS_VAR} __hands_procs
fi
if [ -n "\${${CLOSE_FDS_VAR}+set}" ]; then
  for __hands_fd in /proc/$$/fd/*; do
    __hands_fd=\${__hands_fd##*/}
    case " 0 1 2 \$${CLOSE_FDS_VAR} " in *" $__hands_fd "*) ;; *) eval "exec $__hands_fd>&-" 2>/dev/null ;; esac
  done
  unset ${CLOSE_FDS_VAR} __hands_fd
fi
if [ -n "\${${PIPESTATUS_VAR}-}" ]; then
  unset ${PIPESTATUS_VAR}
  exec ${PIPESTATUS_FD}>&3 3>&-
  trap '__hands_ps=("\${PIPESTATUS[@]}"); if [ \${#__hands_ps[@]} -gt 1 ]; then printf "%s " "\${__hands_ps[@]}" >&${PIPESTATUS_FD}; fi 2>/dev/null' EXIT
fi
`

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
export const REAPER = `trap '' INT TERM HUP QUIT
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

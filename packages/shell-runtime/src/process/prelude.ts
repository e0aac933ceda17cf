import { CGROUP_PROCS_VAR } from '../tree/cgroup-keeper.ts'

/** The variable telling the prelude to report the last pipeline's stage statuses on fd 3. */
export const PIPESTATUS_VAR = 'HANDS_PIPESTATUS'
/** The descriptor the prelude keeps the pipestatus pipe on (moved off fd 3, so fd 3 is free for the command). */
export const PIPESTATUS_FD = 99

/**
 * The script every job's first bash sources through BASH_ENV before it reads its command, so the
 * command line itself runs exactly as `bash -c` would run it. Without the confinement helper it
 * joins the job's cgroup (before anything can fork); for shell_run it reports the last
 * pipeline's statuses at exit on an inherited pipe, never through a file a command could write.
 * It unsets BASH_ENV and its own variables, so nothing leaks to the bash scripts a command starts.
 * The file lives in the session's spool, which confined commands cannot write.
 */
export const PRELUDE = `# hands: sourced once by each job's first bash, then forgotten.
unset BASH_ENV
if [ -n "\${${CGROUP_PROCS_VAR}-}" ]; then
  { echo $$ > "\$${CGROUP_PROCS_VAR}"; } 2>/dev/null || { echo "hands: could not join the job's cgroup" >&2; exit 125; }
  unset ${CGROUP_PROCS_VAR}
fi
if [ -n "\${${PIPESTATUS_VAR}-}" ]; then
  unset ${PIPESTATUS_VAR}
  exec ${PIPESTATUS_FD}>&3 3>&-
  trap '__hands_ps=("\${PIPESTATUS[@]}"); if [ \${#__hands_ps[@]} -gt 1 ]; then printf "%s " "\${__hands_ps[@]}" >&${PIPESTATUS_FD}; fi 2>/dev/null' EXIT
fi
`

/**
 * The reaper: a small bash process that holds a pipe from the host and, when the pipe reaches its
 * end (the host exited, however it died), SIGKILLs every job of the session — the session cgroup
 * and/or every process carrying the session's marker — then removes the session cgroup, the spool
 * and the session's TMPDIR. Arguments: the session cgroup (or ''), the marker prefix
 * `HANDS_JOB=<session>.` (or ''), then the directories to remove.
 */
export const REAPER = `trap '' INT TERM HUP QUIT
target=$1 marker=$2
shift 2
while read -r _; do :; done
if [ -n "$target" ]; then
  for round in 1 2 3 4 5 6 7 8 9 10; do
    if [ -e "$target/cgroup.kill" ]; then
      echo 1 > "$target/cgroup.kill" 2>/dev/null
    else
      for procs in "$target"/j*/cgroup.procs; do
        while read -r p; do kill -9 "$p" 2>/dev/null; done < "$procs"
      done
    fi
    busy=0
    for d in "$target"/j*/; do [ -d "$d" ] && { rmdir "$d" 2>/dev/null || busy=1; }; done
    [ $busy = 0 ] && break
    sleep 0.05
  done
  rmdir "$target" 2>/dev/null
fi
if [ -n "$marker" ]; then
  for round in 1 2 3 4 5 6 7 8 9 10; do
    found=0
    for f in /proc/[0-9]*/environ; do
      p=\${f#/proc/}; p=\${p%/environ}
      [ "$p" = "$$" ] && continue
      while IFS= read -r -d '' kv; do
        if [[ $kv == "$marker"* ]]; then kill -9 "$p" 2>/dev/null; found=1; break; fi
      done < "$f" 2>/dev/null
    done
    [ $found = 0 ] && break
    sleep 0.05
  done
fi
for dir in "$@"; do [ -n "$dir" ] && rm -rf -- "$dir"; done
`

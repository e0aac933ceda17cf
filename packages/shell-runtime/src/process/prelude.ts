import { CGROUP_PROCS_VAR } from '../tree/cgroup-keeper.ts'

/** The variable naming the file where the prelude records the last pipeline's stage statuses. */
export const PIPESTATUS_VAR = 'HANDS_PIPESTATUS'

/**
 * The script every job's first bash sources through BASH_ENV before it reads its command, so the
 * command line itself runs exactly as `bash -c` would run it: join the job's cgroup (before
 * anything can fork), then, for shell_run, record the last pipeline's statuses at exit. It unsets
 * BASH_ENV and its own variables, so nothing leaks to the bash scripts a command starts.
 */
export const PRELUDE = `# hands: sourced once by each job's first bash, then forgotten.
unset BASH_ENV
if [ -n "\${${CGROUP_PROCS_VAR}-}" ]; then
  { echo $$ > "\$${CGROUP_PROCS_VAR}"; } 2>/dev/null || { echo "hands: could not join the job's cgroup" >&2; exit 125; }
  unset ${CGROUP_PROCS_VAR}
fi
if [ -n "\${${PIPESTATUS_VAR}-}" ]; then
  __hands_ps_file=\$${PIPESTATUS_VAR}
  unset ${PIPESTATUS_VAR}
  trap '__hands_ps=("\${PIPESTATUS[@]}"); if [ \${#__hands_ps[@]} -gt 1 ]; then printf "%s " "\${__hands_ps[@]}" > "$__hands_ps_file"; fi' EXIT
fi
`

/**
 * The reaper: a small bash process that holds a pipe from the host and, when the pipe reaches its
 * end (the host exited, however it died), SIGKILLs every job of the session, removes the session
 * cgroup and the spool directory. Arguments: `cgroup <session dir>` or `marker <HANDS_JOB=prefix>`,
 * then the spool directory.
 */
export const REAPER = `trap '' INT TERM HUP QUIT
mode=$1 target=$2 spool=$3
while read -r _; do :; done
if [ "$mode" = cgroup ]; then
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
else
  for round in 1 2 3 4 5 6 7 8 9 10; do
    found=0
    for f in /proc/[0-9]*/environ; do
      p=\${f#/proc/}; p=\${p%/environ}
      [ "$p" = "$$" ] && continue
      while IFS= read -r -d '' kv; do
        if [[ $kv == "$target"* ]]; then kill -9 "$p" 2>/dev/null; found=1; break; fi
      done < "$f" 2>/dev/null
    done
    [ $found = 0 ] && break
    sleep 0.05
  done
fi
[ -n "$spool" ] && rm -rf -- "$spool"
`

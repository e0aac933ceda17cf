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

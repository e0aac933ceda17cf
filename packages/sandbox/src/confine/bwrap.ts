import { lstatSync } from 'node:fs'
import { spawnCwd } from '../cwd/held-cwd.ts'
import { hasRelay, jobArgs, STATUS_FD, type Confiner, type JobSpec, type Launch } from './confiner.ts'
import { isUnder, JOB_CAPABILITIES, hiddenCounts, hiddenPaths, raceGap, socketGuard, type ConfinePolicy } from './policy.ts'
import type { SeccompSupport } from './probe.ts'

/**
 * The bubblewrap arguments for a policy, up to the command: the whole filesystem read-only, a
 * minimal /dev, a private /proc in a private pid namespace, the session's TMPDIR as a private
 * /tmp, the spool read-only (a command reads its whole output there), the writable paths bound
 * read-write, then every hidden path covered (an empty read-only tmpfs over a directory,
 * /dev/null over a file), so a secret store inside a root stays hidden too.
 */
function bwrapArgs(policy: ConfinePolicy, spoolDir: string, isRoot: boolean): string[] {
  // /proc read-only: root could otherwise change the host through /proc/sys (its files are the
  // host's, root-owned), and a job could lower its own OOM score.
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--remount-ro', '/proc', '--unshare-pid', '--die-with-parent']
  // A root process keeps every capability in bubblewrap unless told: it could remount / read-write.
  if (isRoot) {
    args.push('--cap-drop', 'ALL')
    for (const cap of JOB_CAPABILITIES) args.push('--cap-add', cap)
  }
  if (!policy.isNetwork) args.push('--unshare-net')
  const isTmpWritable = policy.writable.some((w) => w !== policy.tmpDir && isUnder(w, '/tmp'))
  if (!isTmpWritable) args.push('--bind', policy.tmpDir, '/tmp')
  for (const w of policy.writable) if (w !== policy.tmpDir || isTmpWritable) args.push('--bind', w, w)
  // After the writable binds, so the spool stays read-only even inside a root.
  args.push('--ro-bind', spoolDir, spoolDir)
  for (const h of hiddenPaths(policy)) {
    let st
    try {
      st = lstatSync(h)
    } catch {
      continue // nothing there to hide
    }
    if (st.isDirectory()) args.push('--tmpfs', h, '--remount-ro', h)
    else args.push('--ro-bind', '/dev/null', h)
  }
  return args
}

/** Confinement by bubblewrap: a mount, pid and (with --no-network) network namespace per job, ~10 ms each. */
export function bwrapConfiner(input: {
  bwrap: string
  helper: string
  policy: ConfinePolicy
  spoolDir: string
  why: string | null
  gaps: string[]
  /** The Landlock ABI (0 for none): from 6 on, the job's signals and abstract UNIX sockets are scoped inside the sandbox too. */
  abi: number
  seccomp: SeccompSupport
  /** Why the relay cannot copy a job's descriptors (see Probe.takeFdsError), or null. */
  takeFdsError: string | null
}): Confiner {
  const { bwrap, helper, policy, spoolDir } = input
  // The inner stage: the capability cut, and (bubblewrap's namespaces aside) io_uring, the
  // keyrings and clone3 refused, and the host's abstract UNIX sockets out of reach.
  // With the network cut, no socket of a family the network namespace does not hold (vsock reaches the VM's host).
  const basic = input.seccomp === 'none' ? [] : ['--seccomp-basic', ...(policy.isNetwork ? [] : ['--netns-families'])]
  const innerGuards = ['--drop-caps', ...basic, ...(input.abi >= 6 ? ['--scope-only'] : [])]
  const isRoot = process.getuid?.() === 0
  // Sockets are guarded by the outer stage's relay, which resolves each path in the job's own view.
  const isGuarded = input.seccomp === 'supervised'
  const guard = isGuarded ? [...socketGuard(policy), ...(input.takeFdsError === null ? [] : ['--guard-no-getfd'])] : []
  const tmpInside = policy.writable.some((w) => w !== policy.tmpDir && isUnder(w, '/tmp')) ? policy.tmpDir : '/tmp'
  const n = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`
  const summary = [
    `commands are confined by bubblewrap${input.why === null ? '' : ` (${input.why})`}`,
    `writes: only under the roots, the session's TMPDIR (private, seen as ${tmpInside})${policy.allowWrite.length > 0 ? ` and ${n(policy.allowWrite.length, '--allow-write path')}` : ''}; the rest of the filesystem is read-only`,
    `hidden from reads: ${hiddenCounts(policy)}, hands' attach directories (covered, even inside a root), the host's /tmp and device nodes`,
    'processes: a private pid namespace and /proc; nothing outside the command is visible; it keeps only its own descriptors, and dies first under memory pressure',
    isGuarded
      ? `sockets: a command connects only to UNIX sockets under the roots and its TMPDIR${policy.allowSockets.length > 0 ? ` and ${n(policy.allowSockets.length, '--allow-socket path')}` : ''}, and to abstract ones of its own tree; it makes no datagram UNIX socket`
      : `gap: a command can connect to any UNIX socket outside /tmp it can name (docker.sock, D-Bus) (no seccomp supervisor)`,
    `network: ${policy.isNetwork ? 'on' : 'cut (a private network namespace with loopback only; no vsock or other socket a namespace does not hold)'}`,
    'cost: about 10 ms of CPU per command',
    ...[...input.gaps, ...(isGuarded && input.takeFdsError !== null ? [raceGap(input.takeFdsError)] : [])].map((g) => `gap: ${g}`),
  ]
  return {
    kind: 'bwrap',
    policy,
    summary: summary.join('\n'),
    unconfinedNote: null,
    unobservedWhy: input.seccomp === 'supervised' ? null : 'not observed: the kernel gives no seccomp supervisor here',
    tmpDir: tmpInside,
    settleMs: 200,
    keeper: null,
    spawnerFile: null,
    isGuarded,
    canLeaveCgroup: false,
    launch(job: JobSpec): Launch {
      const keep = job.keepFds.flatMap((fd) => ['--keep-fd', String(fd)])
      const inner = [helper, ...innerGuards, ...keep, '--expect-cwd', `${job.cwd.dev}:${job.cwd.ino}`, '--argv0', 'bash', '--', job.bash, ...job.bashArgs]
      return {
        file: helper,
        args: [...jobArgs(job), ...guard, '--argv0', 'bwrap', '--', bwrap, ...bwrapArgs(policy, spoolDir, isRoot), '--chdir', job.cwd.real, '--', ...inner],
        cwd: spawnCwd(job.cwd),
        env: { TMPDIR: tmpInside },
        statusFd: job.io === 'pipes' ? STATUS_FD : null,
        hasRelay: hasRelay(job, false),
      }
    },
  }
}

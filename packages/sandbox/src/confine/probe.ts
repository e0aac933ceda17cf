import { spawnSync } from 'node:child_process'
import { accessSync, chmodSync, constants, copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The variable tests and hosts set to pretend mechanisms are missing: `landlock`, `bwrap`, `helper`, comma-separated. */
const UNAVAILABLE_VAR = 'HANDS_CONFINE_UNAVAILABLE'
/** The variable that caps the Landlock ABI hands uses (to see how an older kernel degrades). */
const LANDLOCK_ABI_VAR = 'HANDS_LANDLOCK_ABI'

/**
 * What a job's seccomp filter can do here: `supervised` (calls naming another process are asked
 * of the job's relay, which allows its own tree), `refusing` (no supervisor: those calls are
 * refused even for the job's own processes), `none` (no filter at all).
 */
export type SeccompSupport = 'supervised' | 'refusing' | 'none'

/** What this machine offers for confining commands; each field null/0 with the reason when missing. */
export interface Probe {
  /** The helper binary (hands-confine), or null. */
  helper: string | null
  helperError: string | null
  /** Landlock ABI version the kernel offers (capped by HANDS_LANDLOCK_ABI); 0 when unusable. */
  landlockAbi: number
  /** Why Landlock is unusable (what is missing and its likely cause), or null. */
  landlockError: string | null
  /** What the host's operator can do to get Landlock, or null when nothing can be said. */
  landlockFix: string | null
  seccomp: SeccompSupport
  /** Why the seccomp filter is not `supervised`, or null. */
  seccompError: string | null
  /** What the host's operator can do to get the seccomp supervisor, or null. */
  seccompFix: string | null
  /**
   * Why the relay cannot take a copy of a job's descriptor (`pidfd_getfd` refused: docker's default
   * profile without CAP_SYS_PTRACE), with the fix; null when it can. Its guard then checks connects
   * and lets the kernel make them, which a job racing its own threads could turn.
   */
  takeFdsError: string | null
  /** The bubblewrap binary when it works here, or null. */
  bwrap: string | null
  bwrapError: string | null
  /** Facts the helper read that tell a container's seccomp profile from a kernel without the feature. */
  host: HostFacts
}

/** What the helper's probe saw of the process it ran as. */
export interface HostFacts {
  /** The `Seccomp:` mode of the process (2: a seccomp filter, such as a container engine's profile, is on it); -1 when unknown. */
  filtered: number
  /** The kernel release (uname -r), or null. */
  kernel: string | null
  /** The active security modules (/sys/kernel/security/lsm), or null when securityfs is not readable. */
  lsm: string[] | null
}

const ENOSYS = 38
const EPERM = 1
const EACCES = 13
const EBUSY = 16
const EINVAL = 22
const EOPNOTSUPP = 95

/** The three Landlock calls, as a seccomp profile names them. */
const LANDLOCK_CALLS = 'landlock_create_ruleset, landlock_add_rule and landlock_restrict_self'
/** Where the docs say what a container engine must allow. */
const CONTAINERS_DOC = 'docs/containers.md'

/** True when the kernel release is at least major.minor. */
function kernelAtLeast(release: string | null, major: number, minor: number): boolean {
  const m = /^(\d+)\.(\d+)/.exec(release ?? '')
  if (m === null) return false
  const [a, b] = [Number(m[1]), Number(m[2])]
  return a > major || (a === major && b >= minor)
}

function linux(host: HostFacts): string {
  return host.kernel === null ? 'this kernel' : `this kernel (Linux ${host.kernel})`
}

/**
 * Why Landlock answered `errno` (from the version query, or from restricting a process with
 * `isRestrict`), told apart by what the probe saw: a seccomp filter already on the process (a
 * container engine's profile, whose default action for a call it does not list is ENOSYS, and
 * which older engines answer with EPERM) against a kernel without Landlock or with it off at boot.
 */
export function landlockWhy(errno: number, isRestrict: boolean, host: HostFacts): { why: string; fix: string | null } {
  const isFiltered = host.filtered === 2
  const isInKernel = host.lsm?.includes('landlock') ?? null
  const profileFix = `allow ${LANDLOCK_CALLS} in the container engine's seccomp profile (a newer engine's default profile allows them, or run it with one that does: ${CONTAINERS_DOC})`
  if (isRestrict)
    return {
      why: `Landlock is in the kernel, but restricting a process failed (${errnoText(errno)})${isFiltered ? ": a seccomp profile on this process (a container's?) likely refuses landlock_restrict_self" : ''}`,
      fix: isFiltered ? profileFix : null,
    }
  if (errno === EOPNOTSUPP)
    return { why: `Landlock is built into ${linux(host)} but not enabled at boot`, fix: "add landlock to the kernel's lsm= boot parameter" }
  if (isFiltered && (errno === EPERM || errno === EACCES))
    return {
      why: `Landlock is refused by a seccomp profile on this process (a container's? its calls answer ${errnoText(errno)}, as in engines whose profiles predate Landlock)`,
      fix: profileFix,
    }
  if (errno === ENOSYS && isFiltered && isInKernel !== false && kernelAtLeast(host.kernel, 5, 13))
    return {
      why: `Landlock is refused by a seccomp profile on this process (a container's? its calls answer ENOSYS, a profile's default for calls it does not list)${isInKernel === true ? `; ${linux(host)} has it` : `, unless ${linux(host)} was built without it`}`,
      fix: profileFix,
    }
  if (errno === ENOSYS)
    return {
      why: kernelAtLeast(host.kernel, 5, 13)
        ? `Landlock is not in ${linux(host)}: it was built without CONFIG_SECURITY_LANDLOCK`
        : `Landlock is not in ${linux(host)}: it came in Linux 5.13`,
      fix: 'use a kernel with Landlock (Linux 5.13 or later, CONFIG_SECURITY_LANDLOCK)',
    }
  return { why: `Landlock failed (${errnoText(errno)})`, fix: null }
}

/** Why the seccomp filter is `refusing` or `none` here, from the errno the probe saw (see landlockWhy). */
export function seccompWhy(support: SeccompSupport, errno: number, host: HostFacts): { why: string; fix: string | null } {
  const isFiltered = host.filtered === 2
  if (support === 'refusing') {
    if (errno === EBUSY) return { why: 'another seccomp supervisor holds this process', fix: 'run hands outside the other supervisor' }
    if (isFiltered && (errno === EPERM || errno === EACCES || errno === EINVAL))
      return {
        why: `a seccomp profile on this process (a container's?) refuses a supervisor (${errnoText(errno)})`,
        fix: `allow seccomp with SECCOMP_FILTER_FLAG_NEW_LISTENER in the container engine's seccomp profile (${CONTAINERS_DOC})`,
      }
    return { why: `${linux(host)} gives no seccomp supervisor (it came in Linux 5.0)`, fix: 'use Linux 5.0 or later' }
  }
  if (isFiltered && (errno === EPERM || errno === EACCES || errno === ENOSYS))
    return {
      why: `seccomp filters are refused by a seccomp profile on this process (a container's? seccomp answers ${errnoText(errno)})`,
      fix: `allow the seccomp call in the container engine's seccomp profile (${CONTAINERS_DOC})`,
    }
  return { why: `${linux(host)} gives no seccomp filter (${errnoText(errno)})`, fix: 'use a kernel with CONFIG_SECCOMP_FILTER' }
}

const ERRNO_NAMES: Record<number, string> = { 1: 'EPERM', 13: 'EACCES', 16: 'EBUSY', 22: 'EINVAL', 38: 'ENOSYS', 95: 'EOPNOTSUPP' }

function errnoText(errno: number): string {
  return ERRNO_NAMES[errno] ?? `errno ${errno}`
}

/** The directory of the @hands/shell-runtime package. */
export function packageDir(): string {
  return fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '')
}

/** Where the package keeps the helper built for this platform. */
function packagedHelper(): string {
  return fileURLToPath(new URL(`../../native/bin/${process.platform}-${process.arch}/hands-confine`, import.meta.url))
}

/** Copy the helper into `dir` as a file only its owner may read and run; returns the copy's path. */
export function copyHelper(helper: string, dir: string): string {
  const copy = join(dir, 'hands-confine')
  copyFileSync(helper, copy)
  chmodSync(copy, 0o500)
  return copy
}

/** The private copy of a helper this process could not make executable in place; null once making it failed. */
let privateCopy: string | null | undefined

/**
 * The helper as a file this process can execute, or null when it is not there. A package
 * installed from a tarball may hold it without its execute bit (pnpm packs files 0644): then
 * the bit is set again, or, where the package directory is not ours to change, the helper is
 * copied once per process into a private directory (0700, removed at exit) and run from there.
 */
function runnableHelper(helper: string): string | null {
  if (executable(helper)) return helper
  if (privateCopy === null) return null
  if (privateCopy !== undefined && executable(privateCopy)) return privateCopy
  if (!statSync(helper, { throwIfNoEntry: false })?.isFile()) return null
  try {
    chmodSync(helper, 0o755)
    if (executable(helper)) return helper
  } catch {
    // not ours to change: copy it below
  }
  let dir: string | null = null
  try {
    dir = mkdtempSync(join(tmpdir(), 'hands-confine-'))
    const copy = copyHelper(helper, dir)
    if (!executable(copy)) throw new Error('the copy cannot be run either')
    const made = dir
    process.once('exit', () => rmSync(made, { recursive: true, force: true }))
    privateCopy = copy
    return copy
  } catch {
    // Tried once per process: every later probe would fail the same way.
    if (dir !== null) rmSync(dir, { recursive: true, force: true })
    privateCopy = null
    return null
  }
}

/** The command that builds the helper from source (a C compiler is all it needs). */
function buildCommand(): string {
  return `node ${fileURLToPath(new URL('../../native/build.mjs', import.meta.url))}`
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

function onPath(name: string, path: string | undefined): string | null {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir !== '' && executable(join(dir, name))) return join(dir, name)
  }
  return null
}

function unavailable(env: Record<string, string | undefined>): Set<string> {
  return new Set(
    (env[UNAVAILABLE_VAR] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  )
}

interface HelperProbe {
  takeFdsError: string | null
  abi: number
  error: string | null
  fix: string | null
  seccomp: SeccompSupport
  seccompError: string | null
  seccompFix: string | null
  host: HostFacts
}

const helperCache = new Map<string, HelperProbe>()

/** Read the helper's probe (see native/main.c): what the kernel offers, and why something is missing. */
export function parseProbe(stdout: string, failed: string | null): HelperProbe {
  const host: HostFacts = {
    filtered: Number(/^filtered (-?\d+)$/m.exec(stdout)?.[1] ?? -1),
    kernel: /^kernel (\S+)$/m.exec(stdout)?.[1] ?? null,
    lsm: /^lsm (.+)$/m.exec(stdout)?.[1]?.split(',') ?? null,
  }
  const m = /^landlock (\d+)(?: (restrict )?errno (\d+)[^\n]*)?$/m.exec(stdout)
  const s = /^seccomp (supervised|refusing|none)(?: errno (\d+)[^\n]*)?$/m.exec(stdout)
  const broken = failed ?? 'its output could not be read'
  let landlock: Pick<HelperProbe, 'abi' | 'error' | 'fix'>
  if (m === null) landlock = { abi: 0, error: `the helper's probe failed (${broken})`, fix: null }
  else if (Number(m[1]) > 0) landlock = { abi: Number(m[1]), error: null, fix: null }
  else {
    const { why, fix } = landlockWhy(Number(m[3] ?? ENOSYS), m[2] !== undefined, host)
    landlock = { abi: 0, error: why, fix }
  }
  let seccomp: Pick<HelperProbe, 'seccomp' | 'seccompError' | 'seccompFix'>
  if (s === null) seccomp = { seccomp: 'none', seccompError: `the helper's probe failed (${broken})`, seccompFix: null }
  else if (s[1] === 'supervised') seccomp = { seccomp: 'supervised', seccompError: null, seccompFix: null }
  else {
    const support = s[1] as SeccompSupport
    const { why, fix } = seccompWhy(support, Number(s[2] ?? ENOSYS), host)
    seccomp = { seccomp: support, seccompError: why, seccompFix: fix }
  }
  const take = /^takefd (?:ok|errno (\d+))/m.exec(stdout)
  const takeFdsError =
    take === null || take[1] === undefined
      ? null
      : `pidfd_getfd is refused here (${errnoText(Number(take[1]))}${host.filtered === 2 ? ": a seccomp profile on this process, as docker's default answers it without CAP_SYS_PTRACE" : ''}); to fix: allow pidfd_getfd in the engine's seccomp profile, or give the container CAP_SYS_PTRACE (${CONTAINERS_DOC})`
  return { ...landlock, ...seccomp, host, takeFdsError }
}

/** Ask the helper which Landlock ABI and seccomp filter the kernel offers (one 1–2 ms spawn, once per process). */
function probeHelper(helper: string): HelperProbe {
  const hit = helperCache.get(helper)
  if (hit !== undefined) return hit
  const r = spawnSync(helper, ['--probe'], { encoding: 'utf8', timeout: 10_000 })
  const result = parseProbe(r.stdout ?? '', r.status === 0 ? null : (r.error?.message ?? `exit ${r.status}`))
  helperCache.set(helper, result)
  return result
}

const bwrapCache = new Map<string, string | null>()

/** Check that bubblewrap can build the sandbox hands uses (about 10 ms, once per process, only when asked). */
function probeBwrap(bwrap: string, bash: string): string | null {
  const hit = bwrapCache.get(bwrap)
  if (hit !== undefined) return hit
  const r = spawnSync(bwrap, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--die-with-parent', '--', bash, '-c', ':'], {
    encoding: 'utf8',
    timeout: 10_000,
  })
  const error =
    r.status === 0
      ? null
      : `bubblewrap cannot build its sandbox here (${(r.stderr?.trim() || r.error?.message || `exit ${r.status}`).split('\n')[0] ?? 'failed'})`
  bwrapCache.set(bwrap, error)
  return error
}

/** The helper as a file this process can run, or null (not built, not Linux, or marked unavailable). */
export function helperPath(env: Record<string, string | undefined> = process.env): string | null {
  if (unavailable(env).has('helper') || process.platform !== 'linux') return null
  return runnableHelper(packagedHelper())
}

/**
 * Probe what can confine commands here. Landlock is always probed (one spawn of the helper);
 * bubblewrap only when `isBwrapWanted`, because building its sandbox costs ~10 ms.
 */
export function probe(input: { env: Record<string, string | undefined>; bash: string; isBwrapWanted: boolean }): Probe {
  const off = unavailable(input.env)
  const out: Probe = {
    helper: null,
    helperError: null,
    landlockAbi: 0,
    landlockError: null,
    landlockFix: null,
    seccomp: 'none',
    seccompError: null,
    seccompFix: null,
    bwrap: null,
    bwrapError: null,
    host: { filtered: -1, kernel: null, lsm: null },
    takeFdsError: null,
  }
  const helper = packagedHelper()
  const buildFix = `build the helper: \`${buildCommand()}\` (it needs a C compiler)`
  if (off.has('helper')) out.helperError = `the helper is marked unavailable (${UNAVAILABLE_VAR})`
  else if (process.platform !== 'linux') out.helperError = `no confinement mechanism is implemented for ${process.platform} yet`
  else {
    const runnable = runnableHelper(helper)
    if (runnable === null) out.helperError = `the helper ${helper} is not built (build it with \`${buildCommand()}\`; it needs a C compiler)`
    else out.helper = runnable
  }
  const found = out.helper === null ? null : probeHelper(out.helper)
  if (found !== null) out.host = found.host
  if (found !== null) out.takeFdsError = found.takeFdsError

  if (found === null) {
    out.seccompError = out.helperError
    out.seccompFix = process.platform === 'linux' ? buildFix : null
  } else {
    out.seccomp = found.seccomp
    out.seccompError = found.seccompError
    out.seccompFix = found.seccompFix
    if (off.has('seccomp')) {
      out.seccomp = 'none'
      out.seccompError = `seccomp is marked unavailable (${UNAVAILABLE_VAR})`
      out.seccompFix = `unset ${UNAVAILABLE_VAR}`
    } else if (off.has('supervisor') && out.seccomp === 'supervised') {
      out.seccomp = 'refusing'
      out.seccompError = `the seccomp supervisor is marked unavailable (${UNAVAILABLE_VAR})`
      out.seccompFix = `unset ${UNAVAILABLE_VAR}`
    }
  }

  if (found === null) {
    out.landlockError = out.helperError
    out.landlockFix = process.platform === 'linux' ? buildFix : null
  } else if (off.has('landlock')) {
    out.landlockError = `Landlock is marked unavailable (${UNAVAILABLE_VAR})`
    out.landlockFix = `unset ${UNAVAILABLE_VAR}`
  } else {
    const cap = Number(input.env[LANDLOCK_ABI_VAR] ?? Number.NaN)
    out.landlockAbi = Number.isInteger(cap) && cap >= 0 ? Math.min(cap, found.abi) : found.abi
    out.landlockError = out.landlockAbi > 0 ? null : (found.error ?? `Landlock is capped at ABI 0 (${LANDLOCK_ABI_VAR})`)
    out.landlockFix = out.landlockAbi > 0 ? null : found.error === null ? `unset ${LANDLOCK_ABI_VAR}` : found.fix
  }

  if (!input.isBwrapWanted) out.bwrapError = 'not probed'
  else if (out.helper === null) out.bwrapError = out.helperError
  else if (off.has('bwrap')) out.bwrapError = `bubblewrap is marked unavailable (${UNAVAILABLE_VAR})`
  else {
    const bwrap = onPath('bwrap', input.env['PATH']) ?? onPath('bwrap', '/usr/bin:/bin:/usr/local/bin')
    if (bwrap === null) out.bwrapError = 'bubblewrap (bwrap) is not installed'
    else {
      out.bwrapError = probeBwrap(bwrap, input.bash)
      if (out.bwrapError === null) out.bwrap = bwrap
    }
  }
  return out
}

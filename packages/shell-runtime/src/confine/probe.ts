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
  landlockError: string | null
  seccomp: SeccompSupport
  /** Why the seccomp filter is not `supervised`, or null. */
  seccompError: string | null
  /** The bubblewrap binary when it works here, or null. */
  bwrap: string | null
  bwrapError: string | null
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
  abi: number
  error: string | null
  seccomp: SeccompSupport
  seccompError: string | null
}

const helperCache = new Map<string, HelperProbe>()

/** Ask the helper which Landlock ABI and seccomp filter the kernel offers (one 1–2 ms spawn, once per process). */
function probeHelper(helper: string): HelperProbe {
  const hit = helperCache.get(helper)
  if (hit !== undefined) return hit
  const r = spawnSync(helper, ['--probe'], { encoding: 'utf8', timeout: 10_000 })
  const m = /^landlock (\d+)(?: (.*))?$/m.exec(r.stdout ?? '')
  const s = /^seccomp (supervised|refusing|none)(?: (.*))?$/m.exec(r.stdout ?? '')
  const failed = `the helper's probe failed (${r.error?.message ?? `exit ${r.status}`})`
  const result: HelperProbe = {
    ...(m === null ? { abi: 0, error: failed } : { abi: Number(m[1]), error: Number(m[1]) > 0 ? null : (m[2] ?? 'Landlock is unavailable') }),
    ...(s === null ? { seccomp: 'none' as const, seccompError: failed } : { seccomp: s[1] as SeccompSupport, seccompError: s[2] ?? null }),
  }
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
  const error = r.status === 0 ? null : ((r.stderr?.trim() || r.error?.message || `exit ${r.status}`).split('\n')[0] ?? 'failed')
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
    seccomp: 'none',
    seccompError: null,
    bwrap: null,
    bwrapError: null,
  }
  const helper = packagedHelper()
  if (off.has('helper')) out.helperError = `the helper is marked unavailable (${UNAVAILABLE_VAR})`
  else if (process.platform !== 'linux') out.helperError = `no confinement mechanism is implemented for ${process.platform} yet`
  else {
    const runnable = runnableHelper(helper)
    if (runnable === null) out.helperError = `the helper ${helper} is not built (build it with \`${buildCommand()}\`; it needs a C compiler)`
    else out.helper = runnable
  }

  if (out.helper === null) out.seccompError = out.helperError
  else {
    const found = probeHelper(out.helper)
    out.seccomp = found.seccomp
    out.seccompError = found.seccompError
    if (off.has('seccomp')) {
      out.seccomp = 'none'
      out.seccompError = `seccomp is marked unavailable (${UNAVAILABLE_VAR})`
    } else if (off.has('supervisor') && out.seccomp === 'supervised') {
      out.seccomp = 'refusing'
      out.seccompError = `the seccomp supervisor is marked unavailable (${UNAVAILABLE_VAR})`
    }
  }

  if (out.helper === null) out.landlockError = out.helperError
  else if (off.has('landlock')) out.landlockError = `Landlock is marked unavailable (${UNAVAILABLE_VAR})`
  else {
    const ll = probeHelper(out.helper)
    const cap = Number(input.env[LANDLOCK_ABI_VAR] ?? Number.NaN)
    out.landlockAbi = Number.isInteger(cap) && cap >= 0 ? Math.min(cap, ll.abi) : ll.abi
    out.landlockError = out.landlockAbi > 0 ? null : (ll.error ?? `Landlock is capped at ABI 0 (${LANDLOCK_ABI_VAR})`)
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

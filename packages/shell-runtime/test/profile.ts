import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'

/**
 * A container engine's seccomp profile without the engine: test/fixtures/with-profile.c installs
 * a filter that answers the Landlock calls, or seccomp(2) itself, the way a profile that lacks or
 * refuses them does, sets no_new_privs (as `no-new-privileges` does: setuid programs under it gain
 * nothing), then execs the command. Usable from any package's tests, around any command:
 *
 *   const [file, ...args] = [...withProfile({ landlock: 'ENOSYS' }), process.execPath, 'packages/surface/dist/cli/main.js', 'serve']
 *   spawn(file!, args)
 */

const SOURCE = join(import.meta.dirname, 'fixtures', 'with-profile.c')
/** Compiled once per source and compiler, beside the other tools' caches (ignored by git with node_modules/). */
const CACHE = join(import.meta.dirname, '..', '..', '..', 'node_modules', '.cache', 'hands-with-profile')

/** What a profile answers a refused call with: ENOSYS is what podman and docker answer a call their profile does not list. */
export type ProfileErrno = 'ENOSYS' | 'EPERM' | 'EACCES' | 'EBUSY' | 'EINVAL'

export interface ProfileOptions {
  /** `landlock_create_ruleset`, `landlock_add_rule` and `landlock_restrict_self` fail with this (ENOSYS: not listed; EPERM: refused). */
  landlock?: ProfileErrno
  /** `seccomp(2)` and `prctl(PR_SET_SECCOMP)` fail with this: the command and its children install no filter of their own. */
  seccomp?: ProfileErrno
  /** Only a filter with a listener (a seccomp supervisor) fails, with this; EBUSY is the kernel's answer when another supervisor holds the process. */
  userNotif?: ProfileErrno
  /** `pidfd_getfd` and `process_vm_readv` fail with this, as docker's default profile answers them without CAP_SYS_PTRACE. */
  ptraceCalls?: ProfileErrno
}

let built: string | undefined

/** The with-profile binary, compiled with `$CC` (else `cc`) on first use; throws with the compiler's output when it cannot be built. */
export function withProfileBinary(): string {
  if (built !== undefined) return built
  const cc = process.env['CC'] || 'cc'
  const source = readFileSync(SOURCE)
  const key = createHash('sha256').update(source).update(`\0${cc}\0${process.arch}`).digest('hex').slice(0, 16)
  const target = join(CACHE, key, 'with-profile')
  if (!existsSync(target)) {
    mkdirSync(join(CACHE, key), { recursive: true })
    // Test processes may compile at once: each writes its own file and renames it into place.
    const partial = `${target}.${process.pid}.tmp`
    const r = spawnSync(cc, ['-O2', '-Wall', '-Wextra', '-o', partial, SOURCE], { encoding: 'utf8' })
    if (r.status !== 0) {
      rmSync(partial, { force: true })
      throw new Error(`${cc} could not build ${SOURCE}: ${r.error?.message ?? r.stderr}`)
    }
    renameSync(partial, target)
  }
  built = target
  return target
}

/** The argv prefix that runs a command under the profile: `[...withProfile({ seccomp: 'EPERM' }), 'bash', '-c', 'true']`. */
export function withProfile(options: ProfileOptions = {}): string[] {
  const argv = [withProfileBinary()]
  if (options.landlock !== undefined) argv.push('--landlock', options.landlock)
  if (options.seccomp !== undefined) argv.push('--seccomp', options.seccomp)
  if (options.userNotif !== undefined) argv.push('--user-notif', options.userNotif)
  if (options.ptraceCalls !== undefined) argv.push('--ptrace-calls', options.ptraceCalls)
  argv.push('--')
  return argv
}

import { accessSync, constants } from 'node:fs'
import { dirname, isAbsolute, resolve } from 'node:path'
import type { Confiner } from './confiner.ts'
import { hiddenHolding, isUnder, writableHolding } from './policy.ts'

/** The errors a refused write or a hidden read surfaces as (EACCES, EROFS, EPERM). */
const REFUSED = /Permission denied|Read-only file system|Operation not permitted/
/** Quoted paths (`'x'`, `"x"`, `‘x’`, `` `x' ``) in an error line. */
const QUOTED = /['"‘`]([^'"’`\n]+)['"’]/g
/** Paths the kernel guards for other reasons than the write policy (ptrace checks in /proc, hidden device nodes). */
const OTHER_GUARDS = ['/proc', '/dev']

/** The paths an error line names: quoted ones, and the `…: PATH: Permission denied` field. */
function namedPaths(line: string): string[] {
  const found = [...line.matchAll(QUOTED)].map((m) => m[1] as string)
  const fields = line.split(': ')
  const at = fields.findIndex((f) => REFUSED.test(f))
  if (at > 0) found.push((fields[at - 1] as string).trim())
  return found.filter((p) => p !== '' && (p.startsWith('/') || !p.includes(' ')))
}

/** True when this process (unconfined) could write `path`, or create it in its nearest existing parent. */
function hostCanWrite(path: string): boolean {
  for (let at = path; ; at = dirname(at)) {
    try {
      accessSync(at, constants.W_OK)
      return true
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || at === '/') return false
    }
  }
}

/**
 * The note for a command whose stderr shows the kernel refusing it because of the policy: a
 * write outside the writable paths that the user could otherwise make, or a read of a hidden
 * path. Null for every other failure (a refusal the user would get anyway, a path that is
 * writable, no path named), so it never explains an unrelated error.
 */
export function refusalNote(confiner: Confiner, stderr: string, cwd: string): string | null {
  if (confiner.kind === 'off' || !REFUSED.test(stderr)) return null
  const { policy } = confiner
  const lines = stderr
    .split('\n')
    .filter((l) => REFUSED.test(l))
    .slice(0, 50)
  for (const line of lines) {
    for (const named of namedPaths(line)) {
      const path = isAbsolute(named) ? resolve(named) : resolve(cwd, named)
      if (hiddenHolding(policy, path) !== undefined) {
        return `\`${path}\` is hidden from commands by the host's confinement (secret stores and the paths the host hides cannot be read).`
      }
      if (OTHER_GUARDS.some((g) => isUnder(g, path)) || writableHolding(policy, path) !== undefined || !hostCanWrite(path)) continue
      return (
        `The kernel refused a write to \`${path}\`: commands may write only under the allowed roots and their TMPDIR (${confiner.tmpDir})` +
        `${policy.allowWrite.length > 0 ? ` and ${policy.allowWrite.join(', ')}` : ''}; the host can allow more writable paths.`
      )
    }
  }
  return null
}

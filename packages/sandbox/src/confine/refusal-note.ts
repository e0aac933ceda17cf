import { accessSync, constants, readFileSync, rmSync } from 'node:fs'
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

/** What a job's guard refused (its relay's record: `socket PATH\0`, `metadata PATH\0`), read once and removed. */
function readRefused(file: string): { sockets: string[]; metadata: string[] } {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return { sockets: [], metadata: [] }
  }
  rmSync(file, { force: true })
  const out = { sockets: [] as string[], metadata: [] as string[] }
  for (const entry of text.split('\0')) {
    const space = entry.indexOf(' ')
    const [what, path] = [entry.slice(0, space), entry.slice(space + 1)]
    if (what === 'socket') out.sockets.push(path)
    else if (what === 'metadata') out.metadata.push(path)
  }
  return out
}

/** Up to three names in backticks, then how many more. */
function named(paths: string[]): string {
  const shown = paths
    .slice(0, 3)
    .map((p) => `\`${p}\``)
    .join(', ')
  return paths.length > 3 ? `${shown} and ${paths.length - 3} more` : shown
}

/**
 * The note for what the relay's guard refused a command (`file`: its record, or null): connections
 * to sockets outside the roots, TMPDIR and the host's socket paths, and changes of mode, owner,
 * times or extended attributes outside the writable paths. `paths` are the names it gave, so the
 * stderr-based note does not say the same again.
 */
export function guardNote(confiner: Confiner, file: string | null): { note: string | null; paths: string[] } {
  if (file === null) return { note: null, paths: [] }
  const { sockets, metadata } = readRefused(file)
  const { policy } = confiner
  const notes: string[] = []
  if (sockets.length > 0)
    notes.push(
      `The sandbox refused a connection to the socket${sockets.length === 1 ? '' : 's'} ${named(sockets)}: commands may connect only to sockets under the allowed roots and their TMPDIR (${confiner.tmpDir})` +
        `${policy.allowSockets.length > 0 ? ` and ${policy.allowSockets.join(', ')}` : ''}, and to abstract sockets of their own processes; the host can allow more socket paths.`,
    )
  if (metadata.length > 0)
    notes.push(
      `The sandbox refused to change the mode, owner, times or extended attributes of ${named(metadata)}: commands may change them only under the allowed roots and their TMPDIR (${confiner.tmpDir})` +
        `${policy.allowWrite.length > 0 ? ` and ${policy.allowWrite.join(', ')}` : ''}; the host can allow more writable paths.`,
    )
  return { note: notes.length === 0 ? null : notes.join(' '), paths: [...sockets, ...metadata] }
}

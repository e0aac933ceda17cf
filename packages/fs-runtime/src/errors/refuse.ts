import { ToolError } from '@hands/contracts'
import { rootOf } from '../confine/roots.ts'

/**
 * Builders for every ToolError the filesystem tools raise. Each message names the property
 * and the path as given; each hint says what would be allowed.
 */

/** How a path is named in messages: the property (`src`, `paths[2]`) and the path as given. */
export interface Named {
  label: string
  given: string
}

/** `src \`a/b\`` — the property and the path, for the start of a message. */
export function named(n: Named): string {
  return `${n.label} ${JSON.stringify(n.given)}`
}

/** The hint that says which paths are allowed. */
export function rootsHint(roots: readonly string[]): string {
  const first = roots[0] ?? ''
  return `Use a path inside the allowed roots: relative to the workspace root ${first}, or absolute under ${roots.join(', ')}.`
}

export function invalidInput(message: string, hint: string): ToolError {
  return new ToolError({ code: 'invalid_input', message, hint, is_preflight: true })
}

export function nulByte(n: Named): ToolError {
  return invalidInput(`${named(n)} contains a NUL byte, which no path can hold.`, 'Pass the path without the \\u0000 character.')
}

/** A path refused for lying outside the roots: the property, the path as given, and the root it left. */
export interface OutsidePath extends Named {
  /** The allowed root the path was last inside, read from its text; undefined when it never was. */
  left: string | undefined
}

const FOLLOWED = '(symlinks and `..` are followed before the check)'

function outsideClause(p: OutsidePath): string {
  return p.left === undefined ? `${named(p)} is under none of them` : `${named(p)} leaves the root ${p.left}`
}

function outsideMessage(paths: readonly OutsidePath[]): string {
  const [one] = paths
  if (paths.length === 1 && one !== undefined) {
    return one.left === undefined
      ? `${named(one)} is outside the allowed roots.`
      : `${named(one)} leads outside the allowed roots: it leaves the root ${one.left} ${FOLLOWED}.`
  }
  return `${paths.length} paths are outside the allowed roots: ${paths.map(outsideClause).join('; ')} ${FOLLOWED}.`
}

/**
 * The refusal of one or more paths outside the roots. It names each path as given and the root
 * it left, never where it leads: a symlink's target outside, or what `/proc/self/cwd` is, stays
 * unsaid. `paths` lists the refused paths in input order.
 */
export class OutsideRoots extends ToolError {
  readonly paths: readonly OutsidePath[]

  constructor(paths: readonly OutsidePath[], roots: readonly string[]) {
    super({ code: 'outside_roots', message: outsideMessage(paths), hint: rootsHint(roots), is_preflight: true })
    this.paths = paths
  }
}

/**
 * The allowed root a path was last inside, reading its text alone (relative paths start at the
 * workspace root, `..` climbs, nothing is followed): where it left the roots as far as the
 * caller can see. Undefined when no prefix of it lies inside a root.
 */
export function rootLeft(given: string, roots: readonly string[]): string | undefined {
  let at = given.startsWith('/') ? '/' : (roots[0] ?? '/')
  let left = rootOf(roots, at)
  for (const seg of given.split('/')) {
    if (seg === '' || seg === '.') continue
    if (seg === '..') at = at.slice(0, Math.max(at.lastIndexOf('/'), 1))
    else at = at === '/' ? `/${seg}` : `${at}/${seg}`
    left = rootOf(roots, at) ?? left
  }
  return left
}

/** `n` resolves outside the roots. */
export function outsideRoots(n: Named, roots: readonly string[]): OutsideRoots {
  return new OutsideRoots([{ label: n.label, given: n.given, left: rootLeft(n.given, roots) }], roots)
}

/**
 * The one error for a call whose paths were all checked: an outside_roots naming every path
 * outside the roots in input order when there is any, else the first failure in input order.
 */
export function firstRefusal(failures: readonly unknown[], roots: readonly string[]): unknown {
  const outside = failures.filter((f): f is OutsideRoots => f instanceof OutsideRoots)
  if (outside.length === 0) return failures[0]
  if (outside.length === 1) return outside[0]
  return new OutsideRoots(
    outside.flatMap((e) => e.paths),
    roots,
  )
}

/** A symlink to be copied whose target, from the copy's place, leaves the roots (`left`: the root it leaves). */
export function linkOutside(n: Named, left: string | undefined, roots: readonly string[]): ToolError {
  return new ToolError({
    code: 'outside_roots',
    message: `${named(n)} is a symlink whose target, from where the copy would sit, is outside the allowed roots${left === undefined ? '' : ` (it leaves the root ${left})`}; a symlink is copied only when its target stays inside.`,
    hint: rootsHint(roots),
    is_preflight: true,
  })
}

export function accessDenied(n: Named, detail: string): ToolError {
  return new ToolError({
    code: 'access_denied',
    message: `${named(n)} is not accessible: ${detail}.`,
    hint: 'The host protects this path; choose another path inside the allowed roots.',
    is_preflight: true,
  })
}

export function notFound(n: Named, detail?: string): ToolError {
  return new ToolError({
    code: 'not_found',
    message: `${named(n)} does not exist${detail ? ` (${detail})` : ''}.`,
    hint: 'Check the path with file_exists; relative paths start at the workspace root.',
    is_preflight: true,
  })
}

export function notADirectory(n: Named, detail: string): ToolError {
  return new ToolError({
    code: 'not_a_directory',
    message: `${named(n)}: ${detail}.`,
    hint: 'Name a directory there, or drop the trailing slash to name the file itself.',
    is_preflight: true,
  })
}

export function destinationExists(n: Named): ToolError {
  return new ToolError({
    code: 'destination_exists',
    message: `${named(n)} already exists.`,
    hint: 'Pass is_overwrite: true to replace it whole, or choose a dest that does not exist yet.',
    is_preflight: true,
  })
}

export function intoItself(message: string): ToolError {
  return new ToolError({
    code: 'into_itself',
    message,
    hint: 'Choose a dest outside the source directory (and not one that contains the source).',
    is_preflight: true,
  })
}

export function protectedPath(n: Named, detail: string, roots: readonly string[]): ToolError {
  return new ToolError({
    code: 'protected_path',
    message: `${named(n)} ${detail}; an allowed root is never deleted, moved or replaced.`,
    hint: `Name something inside the root instead (allowed roots: ${roots.join(', ')}).`,
    is_preflight: true,
  })
}

export function notConfirmed(tool: string, action: string, paths: readonly string[], why: string | null = null): ToolError {
  const list = paths.map((p) => JSON.stringify(p)).join(', ')
  return new ToolError({
    code: 'not_confirmed',
    message:
      why === null
        ? `The host declined to ${action} ${list}; ${tool} changed nothing.`
        : `Not confirmed to ${action} ${list}: ${why}; ${tool} changed nothing.`,
    hint: 'Ask the user, or leave these paths as they are.',
    is_preflight: true,
  })
}

/** Why a filesystem call failed, in words, from a Node errno error. */
export function errnoText(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code
    const syscall = (cause as NodeJS.ErrnoException).syscall
    const text = cause.message.replace(/^\w+: /, '').replace(/, \w+ '.*'$/, '')
    return code ? `${code}${syscall ? ` in ${syscall}` : ''}: ${text}` : text
  }
  return String(cause)
}

/**
 * The filesystem failed. `done` says what was and was not done; with `preflight` true nothing
 * had changed yet.
 */
export function ioError(n: Named, cause: unknown, done: { preflight: boolean; state?: string | undefined }): ToolError {
  return new ToolError(
    {
      code: 'io_error',
      message: `${named(n)}: ${errnoText(cause)}.${done.state ? ` ${done.state}` : done.preflight ? ' Nothing was changed.' : ''}`,
      hint: done.preflight
        ? 'Retry once the condition clears; check the path with file_exists.'
        : 'Check the destination and the source with file_exists before retrying.',
      is_preflight: done.preflight,
    },
    { cause },
  )
}

/** A path changed between the check and the act; the call stopped. */
export function changedUnderfoot(n: Named, what: string, preflight: boolean): ToolError {
  return new ToolError({
    code: 'io_error',
    message: `${named(n)} changed while the call was working (${what}); it stopped ${preflight ? 'before changing anything' : 'part way'}.`,
    hint: 'Another process is changing this path; retry once it is stable.',
    is_preflight: preflight,
  })
}

/**
 * The same error, marked as raised after something changed (an earlier item of a batch was
 * already done), with what was done appended to the message.
 */
export function afterChanges(error: unknown, done: string): unknown {
  if (!(error instanceof ToolError) || !error.is_preflight) return error
  return new ToolError({ code: error.code, message: `${error.message} ${done}`, hint: error.hint, is_preflight: false }, { cause: error })
}

/** A FIFO, socket or device: copy makes files, directories and symlinks only. */
export function notCopyable(n: Named, what: string): ToolError {
  return new ToolError({
    code: 'invalid_input',
    message: `${named(n)}: ${what} is not a file, directory or symlink, so it cannot be copied.`,
    hint: 'Copy regular files, directories and symlinks; leave FIFOs, sockets and devices out.',
    is_preflight: true,
  })
}

/** src and dest name the same thing. */
export function samePath(src: Named, dest: Named, real: string): ToolError {
  return invalidInput(`${named(src)} and ${named(dest)} are the same path (${real}).`, 'Choose a dest that differs from src.')
}

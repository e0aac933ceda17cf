import { ToolError } from '@hands/contracts'

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

export function outsideRoots(n: Named, real: string, roots: readonly string[]): ToolError {
  return new ToolError({
    code: 'outside_roots',
    message: `${named(n)} resolves to ${real}, which is outside the allowed roots (symlinks are followed before the check).`,
    hint: rootsHint(roots),
    is_preflight: true,
  })
}

export function linkOutside(n: Named, linkText: string, real: string, roots: readonly string[]): ToolError {
  return new ToolError({
    code: 'outside_roots',
    message: `${named(n)} is a symlink to ${JSON.stringify(linkText)}, which from the copy's place resolves to ${real}, outside the allowed roots; a symlink is copied only when its target stays inside.`,
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

export function notConfirmed(tool: string, action: string, paths: readonly string[]): ToolError {
  return new ToolError({
    code: 'not_confirmed',
    message: `The host declined to ${action} ${paths.map((p) => JSON.stringify(p)).join(', ')}; ${tool} changed nothing.`,
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

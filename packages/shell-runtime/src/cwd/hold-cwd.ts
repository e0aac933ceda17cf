import { closeSync, constants, fstatSync, openSync, readlinkSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import { consultGates, isWithin, resolveInside, type PathGate } from '@hands/fs-runtime'
import { refuse } from '../errors.ts'

/**
 * The directory a command starts in, checked and held open: the command is started in the
 * directory the descriptor names (`/proc/self/fd/<fd>`), so a symlink swapped in after the
 * check cannot move it elsewhere.
 */
export interface HeldCwd {
  /** The real absolute path of the directory that was checked and opened. */
  real: string
  /** The open descriptor, or null where /proc is not mounted (then `real` is used as it is). */
  fd: number | null
  /** Device and inode of the directory, for a check from inside a sandbox. */
  dev: number
  ino: number
}

/** The path to give spawn as `cwd`: the held descriptor when there is one. */
export function spawnCwd(cwd: HeldCwd): string {
  return cwd.fd === null ? cwd.real : `/proc/self/fd/${cwd.fd}`
}

/** Close the held descriptor (once the process is spawned: the child keeps its own working directory). */
export function releaseCwd(cwd: HeldCwd): void {
  if (cwd.fd !== null) closeSync(cwd.fd)
}

/**
 * Open `path` as a directory and read back which directory that is: the held directory,
 * `missing` when it cannot be opened as one, `no-proc` when /proc cannot say what was opened.
 */
function openDir(path: string): HeldCwd | 'missing' | 'no-proc' {
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY)
  } catch {
    return 'missing'
  }
  try {
    const st = fstatSync(fd)
    return { real: readlinkSync(`/proc/self/fd/${fd}`), fd, dev: st.dev, ino: st.ino }
  } catch {
    closeSync(fd)
    return 'no-proc'
  }
}

async function checkedPath(roots: readonly string[], given: string, gates: readonly PathGate[], tool: string): Promise<string> {
  const real = await resolveInside(roots, given, { gates, access: 'cwd', tool, label: 'cwd' })
  let isDir: boolean
  try {
    isDir = (await stat(real)).isDirectory()
  } catch {
    throw refuse('not_found', `cwd \`${given}\` does not exist.`, 'Give an existing directory under an allowed root, or omit `cwd` for the workspace root.')
  }
  if (!isDir) {
    throw refuse('not_a_directory', `cwd \`${given}\` is not a directory.`, 'Give a directory under an allowed root, or omit `cwd` for the workspace root.')
  }
  return real
}

/**
 * Check `cwd` (default the workspace root, the first root; relative to it) against the real
 * roots and the host's gates, and hold the directory open. The fast path opens the path and
 * checks the directory it got; anything unusual goes through fs-runtime's resolveInside for the
 * exact refusal, then opens that real path and requires the same directory back.
 */
export async function holdCwd(roots: readonly string[], cwd: string | undefined, gates: readonly PathGate[], tool: string): Promise<HeldCwd> {
  const given = cwd ?? (roots[0] as string)
  if (!given.includes('\0') && given !== '') {
    const opened = openDir(given.startsWith('/') ? given : `${roots[0]}/${given}`)
    if (typeof opened !== 'string') {
      if (roots.some((r) => isWithin(r, opened.real)) && (await consultGates(gates, opened.real, 'cwd', tool)) === 'allow') return opened
      releaseCwd(opened)
    }
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    const real = await checkedPath(roots, given, gates, tool)
    const opened = openDir(real)
    if (opened === 'no-proc') {
      // /proc cannot name the descriptor: start by the checked path.
      const st = await stat(real)
      return { real, fd: null, dev: st.dev, ino: st.ino }
    }
    if (opened === 'missing') continue
    if (opened.real === real) return opened
    releaseCwd(opened)
  }
  throw refuse('io_error', `cwd \`${given}\` kept changing while it was checked.`, 'Another process is renaming or relinking it; retry once it is stable.')
}

/** Hold `cwd` (as {@link holdCwd} checks it) while `use` runs — the spawns happen inside — then release it. */
export async function withHeldCwd<T>(
  roots: readonly string[],
  cwd: string | undefined,
  gates: readonly PathGate[],
  tool: string,
  use: (held: HeldCwd) => Promise<T>,
): Promise<T> {
  const held = await holdCwd(roots, cwd, gates, tool)
  try {
    return await use(held)
  } finally {
    releaseCwd(held)
  }
}

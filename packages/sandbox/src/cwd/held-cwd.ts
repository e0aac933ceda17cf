import { closeSync, constants, fstatSync, openSync, readlinkSync } from 'node:fs'

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
export function openHeldDir(path: string): HeldCwd | 'missing' | 'no-proc' {
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

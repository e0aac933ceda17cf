import { lstatSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Where a server's attach socket lives: `$XDG_RUNTIME_DIR/hands`, else `<tmpdir>/hands-<uid>`. */
export function defaultAttachDir(env: Record<string, string | undefined> = process.env): string {
  const runtime = env['XDG_RUNTIME_DIR']
  return runtime ? join(runtime, 'hands') : join(tmpdir(), `hands-${process.getuid?.() ?? 'user'}`)
}

/**
 * Make `dir` (mode 0700) when missing, then check that only this user can open it: a real
 * directory (not a symlink), owned by this user, with no group or other permission bits.
 * Throws naming what is wrong.
 */
export function ensurePrivateDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const st = lstatSync(dir)
  const uid = process.getuid?.()
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory (a symlink or a file); remove it or choose another with --attach-dir`)
  if (uid !== undefined && st.uid !== uid) throw new Error(`${dir} belongs to uid ${st.uid}, not to you (uid ${uid}); choose another with --attach-dir`)
  if ((st.mode & 0o077) !== 0) {
    throw new Error(`${dir} has mode ${(st.mode & 0o777).toString(8)}; attach sockets need a directory only you can open (chmod 700 ${dir})`)
  }
  return dir
}

/** The socket of the server with process id `pid` in `dir`. */
export function socketPath(dir: string, pid: number): string {
  return join(dir, `${pid}.sock`)
}

/**
 * The key of that server's socket, which a client sends first: a file only this user can read,
 * in a directory every hands command has hidden (so no command can read it, whichever server runs it).
 */
export function keyPath(dir: string, pid: number): string {
  return join(dir, `${pid}.key`)
}

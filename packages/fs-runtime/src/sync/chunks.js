// @ts-check
/**
 * The per-entry work of tree copies and removals, done synchronously in chunks: on the main
 * thread for small trees and while the worker threads start, and in the worker threads
 * (worker.js) for large ones. Plain JavaScript typed by api.ts (see there why); it imports
 * nothing but node:fs and dir.js.
 */
import { closeSync, constants, fchmodSync, fstatSync, openSync, readdirSync, readSync, rmdirSync, symlinkSync, unlinkSync, writeSync } from 'node:fs'
import { entryAt, errnoError, realOf, selfAt, verifySync } from './dir.js'

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants

/** Files up to this size are copied here by read and write; larger or sparse ones are handed back (`deferred`) for the kernel's copy. */
export const SMALL_FILE = 64 * 1024

/**
 * @typedef {import('./api.ts').DirRef} DirRef
 * @typedef {import('./api.ts').CopyChunk} CopyChunk
 * @typedef {import('./api.ts').CopyDone} CopyDone
 * @typedef {import('./api.ts').UnlinkChunk} UnlinkChunk
 * @typedef {import('./api.ts').UnlinkDone} UnlinkDone
 */

/**
 * The process's umask, read without changing it (process.umask() sets it to 0 for an instant,
 * which a file created by another thread then would get); null where /proc cannot tell.
 * @returns {number | null}
 */
export function readUmask() {
  try {
    const fd = openSync('/proc/self/status', O_RDONLY)
    try {
      const buf = Buffer.allocUnsafe(4096)
      const text = buf.toString('latin1', 0, readSync(fd, buf, 0, buf.length, 0))
      const m = /^Umask:\s*([0-7]+)$/m.exec(text)
      return m?.[1] === undefined ? null : Number.parseInt(m[1], 8)
    } finally {
      closeSync(fd)
    }
  } catch {
    return null
  }
}

/** One buffer per thread for small files. */
let buffer = Buffer.allocUnsafe(0)

/**
 * Copy the open small regular file `fd` (its stats `st`) into a new file `name` of `dest`,
 * created exclusively (never through something planted there) with the source's permission
 * bits. Exactly `st.size` bytes are copied, as the kernel's copy of a file does.
 * @param {number} fd
 * @param {import('node:fs').Stats} st
 * @param {DirRef} dest
 * @param {string} name
 * @param {number | null} umask
 */
function writeSmall(fd, st, dest, name, umask) {
  const mode = st.mode & 0o7777
  const out = openSync(entryAt(dest, name), O_WRONLY | O_CREAT | O_EXCL, mode)
  try {
    // open() applies the umask; only bits it stripped, or special bits, need a chmod.
    if (umask === null || (mode & umask) !== 0 || mode > 0o777) fchmodSync(out, mode)
    if (buffer.length < st.size) buffer = Buffer.allocUnsafe(SMALL_FILE)
    let at = 0
    while (at < st.size) {
      const n = readSync(fd, buffer, 0, st.size - at, at)
      if (n === 0) break
      let done = 0
      while (done < n) done += writeSync(out, buffer, done, n - done, at + done)
      at += n
    }
  } finally {
    closeSync(out)
  }
}

/**
 * Copy one chunk of a directory's files and symlinks from `src` to `dest`: each file opened
 * without following a symlink, checked to be a regular file with fstat, and copied into a new
 * file made with O_EXCL; each symlink made with its text unchanged. Files over SMALL_FILE and
 * sparse files are left for the caller (`deferred`), which copies them with the kernel's copy
 * or keeping holes. Stops at the next entry once `abort[0]` is set.
 * @param {CopyChunk} chunk
 * @param {Int32Array | null} abort
 * @returns {CopyDone}
 */
export function copyChunk(chunk, abort) {
  /** @type {CopyDone} */
  const done = { links: [], deferred: [] }
  const { src, dest, umask } = chunk
  for (const e of chunk.entries) {
    if (abort !== null && Atomics.load(abort, 0) !== 0) break
    if (e.kind === 'link') {
      const text = e.text ?? ''
      symlinkSync(text, entryAt(dest, e.name))
      done.links.push({ real: realOf(dest, e.name), text })
      continue
    }
    const fd = openSync(entryAt(src, e.name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
    try {
      const st = fstatSync(fd)
      if (!st.isFile()) throw errnoError('ECHANGED', `${realOf(src, e.name)} changed while being copied`)
      if (st.size > SMALL_FILE || st.blocks * 512 < st.size) done.deferred.push(e.name)
      else writeSmall(fd, st, dest, e.name, umask)
    } finally {
      closeSync(fd)
    }
  }
  return done
}

/**
 * Unlink one chunk of non-directory names of `dir`. A name already gone is fine; a name that is
 * a directory by now is handed back (`dirs`) for the caller to remove whole. Stops at the next
 * entry once `abort[0]` is set.
 * @param {UnlinkChunk} chunk
 * @param {Int32Array | null} abort
 * @returns {UnlinkDone}
 */
export function unlinkChunk(chunk, abort) {
  /** @type {UnlinkDone} */
  const done = { dirs: [] }
  verifySync(chunk.dir)
  for (const name of chunk.names) {
    if (abort !== null && Atomics.load(abort, 0) !== 0) break
    try {
      unlinkSync(entryAt(chunk.dir, name))
    } catch (cause) {
      const code = /** @type {NodeJS.ErrnoException} */ (cause).code
      if (code === 'ENOENT') continue
      if (code === 'EISDIR' || code === 'EPERM') done.dirs.push(name)
      else throw cause
    }
  }
  return done
}

/**
 * The entries of a directory, split: names of directories and of everything else.
 * @param {DirRef} dir
 * @returns {{ dirs: string[], others: string[] }}
 */
export function listSync(dir) {
  verifySync(dir)
  /** @type {string[]} */
  const dirs = []
  /** @type {string[]} */
  const others = []
  for (const d of readdirSync(selfAt(dir), { withFileTypes: true })) (d.isDirectory() ? dirs : others).push(d.name)
  return { dirs, others }
}

/**
 * Remove the now empty directory `name` of `dir`.
 * @param {DirRef} dir
 * @param {string} name
 */
export function rmdirAt(dir, name) {
  verifySync(dir)
  rmdirSync(entryAt(dir, name))
}

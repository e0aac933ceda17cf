// @ts-check
/**
 * A directory as plain data, shared by the main thread and the worker threads of the tree pool:
 * its real path, and when pinned its `O_PATH` descriptor, through which every entry is reached as
 * `/proc/self/fd/<fd>/<name>` (descriptors belong to the process, so a worker thread reaches the
 * same pinned directory). Without a descriptor the real path is used and re-verified with
 * realpath before anything is removed. Plain JavaScript typed by api.ts (see there why); it
 * imports nothing but node:fs.
 */
import { closeSync, constants, lstatSync, openSync, realpathSync } from 'node:fs'

const { O_NOFOLLOW, O_DIRECTORY } = constants

/** Linux `O_PATH`: a handle to a place in the tree, needing no read permission. */
export const O_PATH = 0o10000000

/** @typedef {import('./api.ts').DirRef} DirRef */

/**
 * @param {DirRef} dir
 * @param {string} name
 * @returns {string} A path that names the entry `name` in this very directory.
 */
export function entryAt(dir, name) {
  return dir.fd === null ? realOf(dir, name) : `/proc/self/fd/${dir.fd}/${name}`
}

/**
 * @param {DirRef} dir
 * @param {string} name
 * @returns {string} The real path of the entry `name`, for messages, gates and checks.
 */
export function realOf(dir, name) {
  return dir.real === '/' ? `/${name}` : `${dir.real}/${name}`
}

/**
 * @param {DirRef} dir
 * @returns {string} A path to the directory itself.
 */
export function selfAt(dir) {
  return dir.fd === null ? dir.real : `/proc/self/fd/${dir.fd}`
}

/**
 * An errno-style error: `code` is what callers branch on, as for Node's own errors.
 * @param {string} code
 * @param {string} message
 */
export function errnoError(code, message) {
  return Object.assign(new Error(`${code}: ${message}`), { code })
}

/**
 * Before a destructive step through a path (unpinned) handle: its real path must still lead to
 * the directory that was checked. Pinned handles need nothing (the descriptor holds it).
 * @param {DirRef} dir
 */
export function verifySync(dir) {
  if (dir.fd !== null) return
  let now
  try {
    now = realpathSync.native(dir.real)
  } catch {
    throw errnoError('ECHANGED', `${dir.real} is gone`)
  }
  if (now !== dir.real) throw errnoError('ECHANGED', `${dir.real} no longer leads to the directory that was checked`)
}

/**
 * Open the child directory `name` of `dir` without following a symlink: ENOTDIR (or ELOOP)
 * when it is anything but a directory, as the kernel says it.
 * @param {DirRef} dir
 * @param {string} name
 * @returns {DirRef}
 */
export function openChildSync(dir, name) {
  const real = realOf(dir, name)
  if (dir.fd === null) {
    verifySync(dir)
    if (!lstatSync(real).isDirectory()) throw errnoError('ENOTDIR', `not a directory, open '${real}'`)
    return { real, fd: null }
  }
  return { real, fd: openSync(entryAt(dir, name), O_PATH | O_DIRECTORY | O_NOFOLLOW) }
}

/**
 * Close a pinned directory's descriptor, if it has one.
 * @param {DirRef} dir
 */
export function closeRef(dir) {
  if (dir.fd !== null) closeSync(dir.fd)
}

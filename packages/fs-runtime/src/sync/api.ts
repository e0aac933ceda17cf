/**
 * The synchronous file system work of tree copies and removals, shared by the main thread and
 * the worker threads of the tree pool (tree/pool.ts). The code is plain JavaScript — dir.js,
 * chunks.js and the thread entry worker.js — so that a worker thread loads it from `src/` and
 * from `dist/` alike, without a TypeScript loader. This module loads it through computed URLs
 * (so only this package's typecheck, which allows JavaScript, reads it; other packages see the
 * types below) and gives it its types; test/sync/api.test.ts holds the JavaScript to them.
 */

/** A directory verified inside the roots: its real path and, when pinned, its `O_PATH` descriptor. */
export interface DirRef {
  real: string
  fd: number | null
}

/** A file or symlink of one directory, to copy. */
export interface ChunkEntry {
  name: string
  kind: 'file' | 'link'
  /** The symlink's text. */
  text?: string | undefined
}

/** Files and symlinks of one directory to copy from `src` to `dest`; `umask` is the process's, or null when unknown. */
export interface CopyChunk {
  src: DirRef
  dest: DirRef
  entries: ChunkEntry[]
  umask: number | null
}

/** What a copy chunk did: the symlinks it made, and the files it left for the kernel's copy (large or sparse). */
export interface CopyDone {
  links: Array<{ real: string; text: string }>
  deferred: string[]
}

/** Non-directory names of one directory to unlink. */
export interface UnlinkChunk {
  dir: DirRef
  names: string[]
}

/** What an unlink chunk found: names that were directories by then. */
export interface UnlinkDone {
  dirs: string[]
}

/** dir.js: directories as plain data. */
export interface DirModule {
  O_PATH: number
  entryAt(dir: DirRef, name: string): string
  realOf(dir: DirRef, name: string): string
  selfAt(dir: DirRef): string
  verifySync(dir: DirRef): void
  openChildSync(dir: DirRef, name: string): DirRef
  closeRef(dir: DirRef): void
  /** An Error with an errno-style `code`, as Node's own file system errors have. */
  errnoError(code: string, message: string): Error & { code: string }
}

/** chunks.js: the per-entry work. */
export interface ChunksModule {
  SMALL_FILE: number
  readUmask(): number | null
  copyChunk(chunk: CopyChunk, abort: Int32Array | null): CopyDone
  unlinkChunk(chunk: UnlinkChunk, abort: Int32Array | null): UnlinkDone
  listSync(dir: DirRef): { dirs: string[]; others: string[] }
  rmdirAt(dir: DirRef, name: string): void
}

const dir = (await import(new URL('./dir.js', import.meta.url).href)) as DirModule
const chunks = (await import(new URL('./chunks.js', import.meta.url).href)) as ChunksModule

export const { O_PATH, entryAt, realOf, selfAt, verifySync, openChildSync, closeRef } = dir
export const { readUmask, copyChunk, unlinkChunk, listSync, rmdirAt } = chunks

/** Where a worker thread of the tree pool starts. */
export const WORKER_URL = new URL('./worker.js', import.meta.url)

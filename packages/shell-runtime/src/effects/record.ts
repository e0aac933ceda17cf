import { closeSync, fstatSync, openSync, readSync } from 'node:fs'

/** What stood at a path: nothing, or an entry of this type, identity, size and times. */
export interface PathState {
  exists: boolean
  type: 'file' | 'dir' | 'symlink' | 'other' | null
  dev: bigint
  ino: bigint
  size: bigint
  mtimeNs: bigint
  ctimeNs: bigint
}

export const NOTHING: PathState = { exists: false, type: null, dev: 0n, ino: 0n, size: 0n, mtimeNs: 0n, ctimeNs: 0n }

const TYPES: Record<string, PathState['type']> = { f: 'file', d: 'dir', l: 'symlink', o: 'other' }

/**
 * The record the helper's relay keeps of what a job changes (`hands-confine --effects FILE`, see
 * native/effects.c): each path the job named in a call that changes the filesystem, the first
 * time, with what stood there before; how many calls' paths it could not read or name; whether
 * it saw the job's calls at all. Read incrementally: each `read()` takes what was appended since.
 */
export class EffectsRecord {
  readonly file: string
  /** Paths in the order first seen, each with what stood there before. */
  readonly paths = new Map<string, PathState>()
  /** Calls whose path could not be read (a process that hides its memory). */
  unreadable = 0
  /** Calls past the relay's limit on distinct paths (counted, not named). */
  overLimit = 0
  /** The relay saw none of the job's calls (it ran without the supervisor). */
  isUnobserved = false
  /** False until the record exists (the helper makes it when the job starts). */
  isPresent = false
  #offset = 0
  #pending = Buffer.alloc(0)

  constructor(file: string) {
    this.file = file
  }

  /** Take what the relay has written since the last read. */
  read(): void {
    let fd: number
    try {
      fd = openSync(this.file, 'r')
    } catch {
      return
    }
    this.isPresent = true
    try {
      const size = fstatSync(fd).size
      if (size <= this.#offset) return
      const chunk = Buffer.allocUnsafe(size - this.#offset)
      const got = readSync(fd, chunk, 0, chunk.length, this.#offset)
      this.#offset += got
      this.#take(Buffer.concat([this.#pending, chunk.subarray(0, got)]))
    } finally {
      closeSync(fd)
    }
  }

  #take(data: Buffer): void {
    let at = 0
    for (;;) {
      const end = data.indexOf(0, at)
      if (end < 0) break
      this.#entry(data.toString('utf8', at, end))
      at = end + 1
    }
    this.#pending = Buffer.from(data.subarray(at))
  }

  #entry(text: string): void {
    if (text.startsWith('! ')) {
      const [, what, count] = text.split(' ')
      if (what === 'unreadable') this.unreadable = Number(count)
      else if (what === 'limit') this.overLimit = Number(count)
      else if (what === 'unobserved') this.isUnobserved = true
      return
    }
    // `<exists> <type> <dev> <ino> <size> <mtime_ns> <ctime_ns> <path>`: the path is the rest.
    const fields: string[] = []
    let at = 0
    for (let k = 0; k < 7; k++) {
      const space = text.indexOf(' ', at)
      if (space < 0) return
      fields.push(text.slice(at, space))
      at = space + 1
    }
    const path = text.slice(at)
    if (path === '' || this.paths.has(path)) return
    const [exists, type, dev, ino, size, mtime, ctime] = fields as [string, string, string, string, string, string, string]
    this.paths.set(
      path,
      exists === '1'
        ? { exists: true, type: TYPES[type] ?? 'other', dev: BigInt(dev), ino: BigInt(ino), size: BigInt(size), mtimeNs: BigInt(mtime), ctimeNs: BigInt(ctime) }
        : NOTHING,
    )
  }
}

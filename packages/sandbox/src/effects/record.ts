import { closeSync, fstatSync, openSync, readSync } from 'node:fs'

/** What stood at a path: nothing, or an entry of this type, identity, size, times, permissions and owner. */
export interface PathState {
  exists: boolean
  type: 'file' | 'dir' | 'symlink' | 'other' | null
  dev: bigint
  ino: bigint
  size: bigint
  mtimeNs: bigint
  ctimeNs: bigint
  /** The mode's low 12 bits. */
  perm: number
  uid: number
  gid: number
  /** Names the entry had (hard links); 0 for nothing. */
  nlink: number
  /** Birth time, 0n where the file system keeps none: a new file that reuses an inode number has another. */
  btimeNs: bigint
}

export const NOTHING: PathState = {
  exists: false,
  type: null,
  dev: 0n,
  ino: 0n,
  size: 0n,
  mtimeNs: 0n,
  ctimeNs: 0n,
  perm: 0,
  uid: 0,
  gid: 0,
  nlink: 0,
  btimeNs: 0n,
}

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
  /**
   * Files the job wrote whose change can show under names the record does not hold (several names,
   * or reached through a descriptor whose name is gone), by `dev:ino`, each with its state before.
   */
  readonly written = new Map<string, PathState>()
  /** Every rename the job asked for, in order: [from, to]. */
  readonly renames: Array<[string, string]> = []
  /** Calls whose path could not be read (a process that hides its memory). */
  unreadable = 0
  /** Calls past the relay's limit on distinct paths (counted, not named). */
  overLimit = 0
  /** Calls whose path (or working directory) was too long to name. */
  tooLong = 0
  /** The relay saw none of the job's calls (it ran without the supervisor). */
  isUnobserved = false
  /** False until the record exists (the helper makes it when the job starts). */
  isPresent = false
  #offset = 0

  /** How much of the record has been read. */
  get bytesRead(): number {
    return this.#offset
  }
  #pending = Buffer.alloc(0)
  /** The source of a rename whose destination is the next entry. */
  #renameFrom: string | null = null

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
      // Byte strings: a name that is not UTF-8 stays exact (see changes.ts).
      this.#entry(data.toString('latin1', at, end))
      at = end + 1
    }
    this.#pending = Buffer.from(data.subarray(at))
  }

  #entry(text: string): void {
    if (this.#renameFrom !== null) {
      this.renames.push([this.#renameFrom, text])
      this.#renameFrom = null
      return
    }
    if (text.startsWith('W ')) {
      const state = parseState(text.slice(2))?.state
      if (state?.exists === true) this.written.set(`${state.dev}:${state.ino}`, state)
      return
    }
    if (text.startsWith('R ')) {
      this.#renameFrom = text.slice(2)
      return
    }
    if (text.startsWith('! ')) {
      const [, what, count] = text.split(' ')
      if (what === 'unreadable') this.unreadable = Number(count)
      else if (what === 'limit') this.overLimit = Number(count)
      else if (what === 'toolong') this.tooLong = Number(count)
      else if (what === 'unobserved') this.isUnobserved = true
      return
    }
    // `<state><path>`: the path is the rest.
    const entry = parseState(text)
    if (entry === undefined || entry.path === '' || this.paths.has(entry.path)) return
    this.paths.set(entry.path, entry.state)
  }
}

/**
 * `<exists> <type> <dev> <ino> <size> <mtime_ns> <ctime_ns> <perm> <uid> <gid> <nlink> <btime_ns> <path>` (the
 * path may be empty): the state, with the path; undefined when the fields are not all there.
 */
function parseState(text: string): { state: PathState; path: string } | undefined {
  const fields: string[] = []
  let at = 0
  for (let k = 0; k < 12; k++) {
    const space = text.indexOf(' ', at)
    if (space < 0) return undefined
    fields.push(text.slice(at, space))
    at = space + 1
  }
  const path = text.slice(at)
  const [exists, type, dev, ino, size, mtime, ctime, perm, uid, gid, nlink, btime] = fields as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ]
  if (exists !== '1') return { state: NOTHING, path }
  const state: PathState = {
    exists: true,
    type: TYPES[type] ?? 'other',
    dev: BigInt(dev),
    ino: BigInt(ino),
    size: BigInt(size),
    mtimeNs: BigInt(mtime),
    ctimeNs: BigInt(ctime),
    perm: Number(perm),
    uid: Number(uid),
    gid: Number(gid),
    nlink: Number(nlink),
    btimeNs: BigInt(btime),
  }
  return { state, path }
}

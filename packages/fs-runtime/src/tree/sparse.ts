import { constants, type Stats } from 'node:fs'
import { close, copyFile, errno, fchmod, fstat, ftruncate, open, read, statfs, write } from '../util/fsio.ts'

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NONBLOCK, O_DIRECT, COPYFILE_EXCL, COPYFILE_FICLONE_FORCE } = constants

/** Bytes read at a time while scanning a sparse file; two reads are kept in flight. */
const CHUNK = 1024 * 1024

/** `statfs` f_type of tmpfs and of ext2/3/4. */
const TMPFS_MAGIC = 0x01021994
const EXT4_SUPER_MAGIC = 0xef53
/** Larger than any ext4 inline data (which lives in the inode, counted in no block). */
const INLINE_MAX = 64 * 1024

/** Zeros to compare against, made on the first sparse copy. */
let zeros: Buffer | null = null

let isDirectReading = O_DIRECT !== undefined

/** Switch direct reads of sparse sources off (or back on where the platform has them); for tests of the page-cache path. */
export function setDirectReads(on: boolean): void {
  isDirectReading = on && O_DIRECT !== undefined
}

/**
 * True when a regular file has holes: fewer bytes allocated (`st_blocks` × 512) than its size,
 * the test `cp --sparse=auto` makes. A dense file (the common case) is copied by the kernel.
 */
export function isSparse(st: Stats): boolean {
  return st.blocks * 512 < st.size
}

/** True when `buf[from, to)` holds only zero bytes. */
function isZero(buf: Buffer, from: number, to: number): boolean {
  return buf.compare(zeros as Buffer, 0, to - from, from, to) === 0
}

/**
 * A second descriptor on the source, opened with O_DIRECT, or null where that cannot be had.
 * Reading a hole through it zero-fills the buffer without filling the page cache (a buffered
 * read of a 1 GiB hole caches 1 GiB of zero pages). It must be the same file as `st`.
 */
async function openDirect(srcPath: string, st: Stats): Promise<number | null> {
  if (!isDirectReading) return null
  let fd: number
  try {
    fd = await open(srcPath, O_RDONLY | O_NONBLOCK | (O_DIRECT as number))
  } catch {
    return null
  }
  const now = await fstat(fd).catch(() => null)
  if (now !== null && now.dev === st.dev && now.ino === st.ino) return fd
  await close(fd).catch(() => undefined)
  return null
}

/**
 * Bytes of the file `fd` (its stats `st`) that hold data, as far as the kernel counts them, or
 * null where the count cannot be trusted for that. On tmpfs and ext4, `st_blocks` counts every
 * block holding data, delayed allocations included (ext4 data inline in the inode counts none,
 * but only files smaller than INLINE_MAX have any): once that many bytes of data blocks have
 * been found, the rest of the file is hole and need not be read. Elsewhere the count can lag
 * behind the data (ZFS before a sync) and the whole file is read.
 */
async function countedData(fd: number, st: Stats): Promise<number | null> {
  const type = await statfs(`/proc/self/fd/${fd}`).then(
    (s) => s.type,
    () => null,
  )
  if (type === TMPFS_MAGIC || (type === EXT4_SUPER_MAGIC && st.size > INLINE_MAX)) return st.blocks * 512
  return null
}

async function writeAll(fd: number, buf: Buffer, from: number, to: number, position: number): Promise<void> {
  let done = 0
  while (from + done < to) done += await write(fd, buf, from + done, to - from - done, position + done)
}

/**
 * Write the blocks of `buf[0, n)` (the file's bytes from `position`) that hold a non-zero byte,
 * each run of such blocks in one write at its offset; all-zero blocks are left as holes.
 * Blocks are aligned to file offsets, `block` bytes each. Resolves to the bytes of the whole
 * blocks written (what they take on disk).
 */
async function writeData(fd: number, buf: Buffer, n: number, position: number, block: number): Promise<number> {
  if (isZero(buf, 0, n)) return 0
  const blockEnd = (at: number) => Math.min(n, (Math.floor((position + at) / block) + 1) * block - position)
  let written = 0
  let at = 0
  while (at < n) {
    while (at < n && isZero(buf, at, blockEnd(at))) at = blockEnd(at)
    if (at >= n) break
    let end = blockEnd(at)
    while (end < n && !isZero(buf, end, blockEnd(end))) end = blockEnd(end)
    await writeAll(fd, buf, at, end, position + at)
    written += (Math.ceil((position + end) / block) - Math.floor((position + at) / block)) * block
    at = end
  }
  return written
}

/**
 * Copy the open regular file `srcFd` (its stats `st`; `srcPath` reopens it) to a new file at
 * `destPath`, keeping its holes. The destination is created exclusively, so a symlink planted
 * there is never written through. A reflink is tried first (on filesystems that share
 * extents it copies holes as holes, at once); otherwise the source is read in chunks and only
 * blocks holding a non-zero byte are written, at their offsets, then the file is cut to the
 * source's size. Permission bits are kept, as `copyFile` keeps them. Node has no
 * SEEK_DATA/SEEK_HOLE, so holes are read: as zeros the kernel fills in, through O_DIRECT
 * where the filesystem allows it (no page cache), else through the page cache — up to where
 * the blocks the kernel counts for the file have all been found (see countedData): a file
 * that is all hole is not read at all, one with data only at its start only there.
 */
export async function copySparse(srcPath: string, srcFd: number, st: Stats, destPath: string): Promise<void> {
  // tmpfs and ext4 have no reflink; elsewhere try one.
  let left = await countedData(srcFd, st)
  if (left === null) {
    try {
      await copyFile(srcPath, destPath, COPYFILE_EXCL | COPYFILE_FICLONE_FORCE)
      return
    } catch (cause) {
      // No reflink here: the failed attempt removed what it made.
      if (errno(cause) === 'EEXIST') throw cause
    }
  }
  zeros ??= Buffer.alloc(CHUNK)
  const block = Math.min(CHUNK, Math.max(512, st.blksize || 4096))
  const size = st.size
  const chunk = Math.max(block, Math.min(CHUNK, Math.ceil(size / block) * block))
  const bufs = [Buffer.allocUnsafe(chunk), Buffer.allocUnsafe(chunk)] as const
  const direct = left === 0 ? null : await openDirect(srcPath, st)
  // A direct read needs an aligned buffer where the file has data (EINVAL otherwise; a
  // Buffer's address cannot be chosen): such a chunk is read again through the page cache.
  const readChunk = async (buf: Buffer, position: number): Promise<number> => {
    if (direct !== null) {
      try {
        return await read(direct, buf, 0, chunk, position)
      } catch (cause) {
        if (errno(cause) !== 'EINVAL') throw cause
      }
    }
    return read(srcFd, buf, 0, chunk, position)
  }
  let fd: number | null = null
  // Read the next chunk while the current one is scanned and written.
  let next: Promise<number> | null = null
  try {
    fd = await open(destPath, O_WRONLY | O_CREAT | O_EXCL, 0o600)
    await fchmod(fd, st.mode & 0o7777)
    next = size > 0 && left !== 0 ? readChunk(bufs[0], 0) : null
    // Handled here so a failure while a chunk is written is not reported as unhandled; the
    // loop awaits it and throws.
    next?.catch(() => undefined)
    for (let position = 0, i = 0; next !== null; i++) {
      const n = await next
      next = null
      if (n === 0) break
      const buf = bufs[i % 2] as Buffer
      if (position + n < size) {
        next = readChunk(bufs[(i + 1) % 2] as Buffer, position + n)
        next.catch(() => undefined)
      }
      const found = await writeData(fd, buf, n, position, block)
      position += n
      // Every block the kernel counts is found: the rest is hole.
      if (left !== null && (left -= found) <= 0) break
    }
    await ftruncate(fd, size)
  } finally {
    // Never leave a read in flight into a buffer or descriptor that is closed below.
    if (next !== null) await next.catch(() => undefined)
    if (direct !== null) await close(direct).catch(() => undefined)
    if (fd !== null) await close(fd)
  }
}

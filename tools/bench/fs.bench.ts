/**
 * fs-runtime against the system tools on the same data, alternating in one run:
 * - copy one 512 MiB file vs `cp`
 * - copy a 1 GiB sparse file (all hole) and a 256 MiB one with data islands vs `cp`
 * - copy a tree of 10,000 × 1 KiB files vs `cp -r`, and delete it vs `rm -rf`, on the temp
 *   dir's disk and again on tmpfs (/dev/shm) when there is one (no disk: hands' own cost); the
 *   runtime is given the native helper, as the server gives it, so deletes go through it
 *   (`BENCH_NO_HELPER=1`: the worker-thread walk alone). Every copy round runs before the first
 *   delete: ext4 skips inodes freed within the last minute when it allocates
 *   (recently_deleted(), a third of cp's CPU in `perf` after a delete round), so copies made
 *   right after deletes measure the allocator's scan, whichever tool copies
 * - file_exists on 1,000 paths, as paths per second
 * Each pair is timed in rounds (≥ 5) that alternate which goes first, with `sync` (untimed)
 * before every timed step so writeback of one step does not land in the next. Every figure is
 * min – median – max over the rounds: hands, the system tool, and the ratio of the two in each
 * round (below 1 is faster), with the CPU each used (hands: every thread of this process; the
 * system tool: its rusage, in 10 ms steps). Data lives in temp dirs removed at the end.
 */
import { execFileSync } from 'node:child_process'
import { randomFillSync } from 'node:crypto'
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { createFsRuntime } from '@hands/fs-runtime'
import { helperPath } from '@hands/shell-runtime'
import { inTurn, median, spread, timed } from './timings.ts'

const BIG_MIB = Number(process.env['BENCH_BIG_MIB'] ?? 512)
const TREE_DIRS = 100
const TREE_FILES_PER_DIR = 100
const SMALL_BYTES = 1024
const ROUNDS_BIG = Math.max(5, Number(process.env['BENCH_ROUNDS_BIG'] ?? 5))
const ROUNDS_TREE = Math.max(5, Number(process.env['BENCH_ROUNDS_TREE'] ?? 7))
const EXISTS_PATHS = 1000
const EXISTS_ROUNDS = 30

const sync = () => execFileSync('sync')
const sh = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { stdio: 'ignore' })

/** CPU milliseconds used so far by this process (every thread) and by its waited-for children (10 ms steps). */
function cpuNow(): { self: number; children: number } {
  const u = process.cpuUsage()
  const fields = (readFileSync('/proc/self/stat', 'utf8').split(') ')[1] as string).split(' ')
  return { self: (u.user + u.system) / 1000, children: (Number(fields[13]) + Number(fields[14])) * 10 }
}

/** Milliseconds `work` takes, after an untimed `sync`; its CPU milliseconds (hands' own, or the child's) go to `cpu`. */
async function synced(work: () => unknown, cpu: number[]): Promise<number> {
  sync()
  const before = cpuNow()
  const ms = await timed(work)
  const after = cpuNow()
  cpu.push(after.self - before.self + after.children - before.children)
  return ms
}

/** One figure: per-round times and CPU of hands and of the system tool, and the target for the ratio (null: information only). */
interface Row {
  what: string
  ours: number[]
  system: number[]
  oursCpu: number[]
  systemCpu: number[]
  /** The highest median ratio that meets the target. */
  target: number | null
}

function row(what: string, target: number | null): Row {
  return { what, ours: [], system: [], oursCpu: [], systemCpu: [], target }
}
const rows: Row[] = []

/** Copy and delete a tree of small files under `dir`, alternating with cp -r and rm -rf. */
async function treeRows(dir: string, fs: ReturnType<typeof createFsRuntime>, where: string): Promise<void> {
  // Build the tree: TREE_DIRS directories of TREE_FILES_PER_DIR files.
  const small = Buffer.alloc(SMALL_BYTES)
  for (let d = 0; d < TREE_DIRS; d++) {
    mkdirSync(join(dir, 'tree', `d${d}`), { recursive: true })
    for (let f = 0; f < TREE_FILES_PER_DIR; f++) {
      randomFillSync(small)
      writeFileSync(join(dir, 'tree', `d${d}`, `f${f}.txt`), small)
    }
  }
  const copy = row(`copy a tree of ${TREE_DIRS * TREE_FILES_PER_DIR} × ${SMALL_BYTES} B files vs cp -r, ${where}`, 1.1)
  const del = row(`delete that tree vs rm -rf, ${where}${isHelper ? '' : ' (no native helper)'}`, 1.1)
  for (let r = 0; r < ROUNDS_TREE; r++) {
    const ours = () => synced(() => fs.copy({ src: 'tree', dest: `tree-ours-${r}` }), copy.oursCpu).then((t) => copy.ours.push(t))
    const system = () => synced(() => sh('cp', '-r', join(dir, 'tree'), join(dir, `tree-sys-${r}`)), copy.systemCpu).then((t) => copy.system.push(t))
    await inTurn(r, [system, ours])
  }
  for (let r = 0; r < ROUNDS_TREE; r++) {
    const oursDel = () => synced(() => fs.delete({ paths: [`tree-ours-${r}`] }), del.oursCpu).then((t) => del.ours.push(t))
    const systemDel = () => synced(() => sh('rm', '-rf', join(dir, `tree-sys-${r}`)), del.systemCpu).then((t) => del.system.push(t))
    await inTurn(r, [systemDel, oursDel])
  }
  rows.push(copy, del)
}

/**
 * Copy a sparse file of `mib` MiB with 256 KiB of random data at each offset of `islands`,
 * alternating with `cp` (which keeps holes by default), and check both copies stayed sparse.
 * A fresh source per round, so neither side finds its holes already in the page cache.
 */
async function sparseRow(
  dir: string,
  fs: ReturnType<typeof createFsRuntime>,
  name: string,
  mib: number,
  islands: number[],
  target: number | null,
): Promise<void> {
  const make = () => {
    const path = join(dir, name)
    writeFileSync(path, '')
    truncateSync(path, mib * 1024 * 1024)
    const fd = openSync(path, 'r+')
    const data = Buffer.alloc(256 * 1024)
    for (const at of islands) {
      randomFillSync(data)
      writeSync(fd, data, 0, data.length, at)
    }
    closeSync(fd)
  }
  const data = islands.length * 256
  const sparse = row(`copy a ${mib} MiB sparse file, ${data === 0 ? 'all hole' : `${data / 1024} MiB of data in islands`}, vs cp`, target)
  let allocated = 0
  for (let r = 0; r < ROUNDS_BIG; r++) {
    const o = async () => {
      make()
      sparse.ours.push(await synced(() => fs.copy({ src: name, dest: `${name}-ours` }), sparse.oursCpu))
      allocated = Math.max(allocated, statSync(join(dir, `${name}-ours`)).blocks * 512 - statSync(join(dir, name)).blocks * 512)
      rmSync(join(dir, `${name}-ours`))
      rmSync(join(dir, name))
    }
    const s = async () => {
      make()
      sparse.system.push(await synced(() => sh('cp', join(dir, name), join(dir, `${name}-sys`)), sparse.systemCpu))
      rmSync(join(dir, `${name}-sys`))
      rmSync(join(dir, name))
    }
    await inTurn(r, [s, o])
  }
  sparse.what += allocated <= 0 ? ' (the copy allocated no more than the source)' : ` (the copy allocated ${allocated} B more than the source)`
  rows.push(sparse)
}

/** A fresh dir on tmpfs (/dev/shm) when it is another filesystem than the temp dir, else null. */
function tmpfsBase(): string | null {
  if (!existsSync('/dev/shm')) return null
  const dir = realpathSync(mkdtempSync('/dev/shm/hands-fs-bench-'))
  if (statSync(dir).dev === statSync(tmpdir()).dev) {
    rmSync(dir, { recursive: true, force: true })
    return null
  }
  return dir
}

/** One big file vs cp, then the sparse files. */
async function fileRows(): Promise<void> {
  const chunk = Buffer.alloc(1024 * 1024)
  const fd = openSync(join(base, 'big'), 'w')
  for (let i = 0; i < BIG_MIB; i++) {
    randomFillSync(chunk)
    writeSync(fd, chunk)
  }
  closeSync(fd)
  const big = row(`copy one ${BIG_MIB} MiB file vs cp, disk`, 1.25)
  for (let r = 0; r < ROUNDS_BIG; r++) {
    const ours = () => synced(() => fs.copy({ src: 'big', dest: 'big-ours' }), big.oursCpu).then((t) => big.ours.push(t))
    const system = () => synced(() => sh('cp', join(base, 'big'), join(base, 'big-sys')), big.systemCpu).then((t) => big.system.push(t))
    await inTurn(r, [system, ours])
    rmSync(join(base, 'big-ours'))
    rmSync(join(base, 'big-sys'))
  }
  rows.push(big)
  rmSync(join(base, 'big'))

  // --- sparse files -------------------------------------------------------------------------
  await sparseRow(base, fs, 'hole', 1024, [], 3)
  // Data islands: 64 islands of 256 KiB spread over the file (16 MiB of data in 256 MiB).
  await sparseRow(
    base,
    fs,
    'islands',
    256,
    Array.from({ length: 64 }, (_, i) => i * 4 * 1024 * 1024 + 12345),
    null,
  )
}

const helper = process.env['BENCH_NO_HELPER'] ? null : helperPath()
const isHelper = helper !== null
const base = realpathSync(mkdtempSync(join(tmpdir(), 'hands-fs-bench-')))
const fs = createFsRuntime({ roots: [base], helper })

try {
  // --- one big file and sparse files (BENCH_FS_TREES_ONLY=1 leaves them out) -----------------
  if (!process.env['BENCH_FS_TREES_ONLY']) await fileRows()

  // --- trees, on disk then on tmpfs -----------------------------------------------------------
  await treeRows(base, fs, 'disk')
  const shm = tmpfsBase()
  if (shm !== null) {
    try {
      await treeRows(shm, createFsRuntime({ roots: [shm], helper }), 'tmpfs')
    } finally {
      rmSync(shm, { recursive: true, force: true })
    }
  } else console.log('no tmpfs at /dev/shm apart from the temp dir: the tmpfs rows are left out')

  // --- file_exists ------------------------------------------------------------------------
  const paths: string[] = []
  for (let i = 0; i < EXISTS_PATHS; i++) {
    const d = i % TREE_DIRS
    // Three in four exist; the rest are missing names in existing directories.
    paths.push(i % 4 === 3 ? `tree/d${d}/missing${i}.txt` : `tree/d${d}/f${i % TREE_FILES_PER_DIR}.txt`)
  }
  const rates: number[] = []
  for (let r = 0; r < EXISTS_ROUNDS; r++) {
    const t0 = performance.now()
    const result = await fs.file_exists({ paths })
    const ms = performance.now() - t0
    if (result.paths.length !== EXISTS_PATHS) throw new Error('file_exists lost paths')
    rates.push(EXISTS_PATHS / (ms / 1000))
  }

  // --- report -------------------------------------------------------------------------------
  console.log(`data under ${base} (${tmpdir()}) and /dev/shm; min – median – max of alternating rounds (${ROUNDS_BIG} big and sparse, ${ROUNDS_TREE} tree)\n`)
  console.log('| what | hands ms | system ms | ratio (per round) | target (median) | CPU ms, hands / system (medians) |')
  console.log('|---|---:|---:|---:|---|---:|')
  for (const r of rows) {
    const ratios = r.ours.map((t, i) => t / (r.system[i] as number))
    const target = r.target === null ? 'info' : `≤ ${r.target}×${median(ratios) <= r.target ? '' : ' (missed)'}`
    const cpu = `${median(r.oursCpu).toFixed(0)} / ${median(r.systemCpu).toFixed(0)}`
    console.log(`| ${r.what} | ${spread(r.ours, 1)} | ${spread(r.system, 1)} | ${spread(ratios, 2, '×')} | ${target} | ${cpu} |`)
  }
  const rate = median(rates)
  console.log(
    `| file_exists on ${EXISTS_PATHS} paths | ${((EXISTS_PATHS / rate) * 1000).toFixed(1)} | — | ${Math.round(rate).toLocaleString('en-US')} paths/s | ≥ 50,000 paths/s${rate >= 50_000 ? '' : ' (missed)'} |`,
  )
} finally {
  rmSync(base, { recursive: true, force: true })
}

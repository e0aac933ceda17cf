/**
 * `pnpm bench limits`: what the shell runtime's disk and memory limits cost and save, each against
 * the same work with the limit lifted, measured in the same run (rounds interleaved; min–median–max).
 *
 * 1. Memory: background shells whose host keeps 100,000 rows of history, filled with long lines,
 *    with `ringBytes` at its default against no byte bound (only `ringLines`, as before the limit).
 * 2. Disk and speed: a 256 MiB printer in a background shell, its log rotating within
 *    `logBytes` = 8 MiB against one unbounded log.
 * 3. Disk and speed: three 96 MiB shell_run floods under a 128 MiB `spoolBytes` budget against
 *    an unbounded one.
 */
import { mkdtempSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { setTimeout as sleep } from 'node:timers/promises'
import { inTurn, spread } from './timings.ts'
import { createShellRuntime, SHELL_LIMITS, type ShellRuntime, type ShellRuntimeOptions } from '@hands/shell-runtime'
import { waitExited } from './wait-exited.ts'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const MiB = 1024 * 1024
const UNBOUNDED = Number.MAX_SAFE_INTEGER
const ROUNDS = 3

const root = realpathSync(mkdtempSync(join(tmpdir(), 'hands-bench-limits-')))

function report(what: string, figure: string) {
  console.log(`${what.padEnd(64)} ${figure}`)
}

/** Throughput and disk left behind, each min – median – max. */
function speedAndDisk(rounds: Array<{ mibPerS: number; diskMiB: number }>): string {
  const speed = spread(
    rounds.map((r) => r.mibPerS),
    0,
  )
  const disk = spread(
    rounds.map((r) => r.diskMiB),
    1,
  )
  return `${speed} MiB/s, disk ${disk} MiB`
}

/** JS heap plus ArrayBuffers (where the terminal's rows live) after collection: unlike RSS it falls back when memory is freed, so rounds can alternate. */
async function settledMemory(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc()
    await sleep(50)
  }
  const m = process.memoryUsage()
  return m.heapUsed + m.arrayBuffers
}

/** Bytes of every file in `dir`. */
function diskBytes(dir: string): number {
  let total = 0
  for (const name of readdirSync(dir)) total += statSync(join(dir, name)).size
  return total
}

async function withRuntime<T>(options: Partial<ShellRuntimeOptions>, fn: (rt: ShellRuntime) => Promise<T>): Promise<T> {
  const rt = createShellRuntime({ roots: [root], ...options })
  try {
    await rt.shell_run({ commands: ['true'] }) // the one-time login-environment capture
    return await fn(rt)
  } finally {
    await rt.close()
  }
}

// 1. Four shells whose host keeps 100,000 rows of history, each printing 10,000 lines of 2,000
// characters (100,000 rows of 200 columns), then exiting; a read makes each parse what its
// history can show.
const SHELLS = 4
const RING_LINES = 100_000
const LONG_LINES = `awk 'BEGIN { s = sprintf("%2000s", ""); gsub(/ /, "x", s); for (i = 1; i <= 10000; i++) print s }'`
async function ringMemory(ringBytes: number): Promise<number> {
  return withRuntime({ ringBytes, ringLines: RING_LINES }, async (rt) => {
    const before = await settledMemory()
    for (let i = 0; i < SHELLS; i++) await rt.shell_background({ commands: [LONG_LINES], id: `ring-${i}` })
    for (let i = 0; i < SHELLS; i++) await waitExited(rt, `ring-${i}`)
    for (let i = 0; i < SHELLS; i++) await rt.shell_logs({ id: `ring-${i}`, n: 1 })
    return ((await settledMemory()) - before) / MiB
  })
}

// 2. A 256 MiB printer of 100-byte lines under a PTY, read to the end.
const PRINTER_BYTES = 256 * MiB
const PRINTER = `yes ${'x'.repeat(99)} | head -c ${PRINTER_BYTES}`
async function printer(logBytes: number): Promise<{ mibPerS: number; diskMiB: number }> {
  return withRuntime({ logBytes }, async (rt) => {
    const t = performance.now()
    await rt.shell_background({ commands: [PRINTER], id: 'printer' })
    await waitExited(rt, 'printer')
    const seconds = (performance.now() - t) / 1000
    return { mibPerS: PRINTER_BYTES / MiB / seconds, diskMiB: diskBytes(rt.spoolDir) / MiB }
  })
}

// 3. Three shell_run floods of 96 MiB each.
const FLOOD = `head -c ${96 * MiB} /dev/zero | tr '\\0' x`
async function floods(spoolBytes: number): Promise<{ mibPerS: number; diskMiB: number }> {
  return withRuntime({ spoolBytes }, async (rt) => {
    const t = performance.now()
    for (let i = 0; i < 3; i++) await rt.shell_run({ commands: [FLOOD] })
    const seconds = (performance.now() - t) / 1000
    return { mibPerS: (3 * 96) / seconds, diskMiB: diskBytes(rt.spoolDir) / MiB }
  })
}

try {
  const ring = { bounded: [] as number[], unbounded: [] as number[] }
  const log = { bounded: [] as Array<{ mibPerS: number; diskMiB: number }>, unbounded: [] as Array<{ mibPerS: number; diskMiB: number }> }
  const spool = { bounded: [] as Array<{ mibPerS: number; diskMiB: number }>, unbounded: [] as Array<{ mibPerS: number; diskMiB: number }> }
  // Each pair alternates which side goes first, round by round.
  for (let round = 0; round < ROUNDS; round++) {
    await inTurn(round, [
      async () => ring.unbounded.push(await ringMemory(UNBOUNDED)),
      async () => ring.bounded.push(await ringMemory(SHELL_LIMITS.ringBytes.default)),
    ])
    await inTurn(round, [async () => log.unbounded.push(await printer(UNBOUNDED)), async () => log.bounded.push(await printer(8 * MiB))])
    await inTurn(round, [async () => spool.unbounded.push(await floods(UNBOUNDED)), async () => spool.bounded.push(await floods(128 * MiB))])
  }
  console.log(`${ROUNDS} interleaved rounds; figures are min – median – max\n`)
  report(`${SHELLS} shells × 100,000 rows of 200 columns kept (ringLines ${RING_LINES}), heap + buffers, no byte bound`, `${spread(ring.unbounded, 0)} MiB`)
  report(`  the same with ringBytes = ${SHELL_LIMITS.ringBytes.default / MiB} MiB (default)`, `${spread(ring.bounded, 0)} MiB`)
  report('  ratio bounded / unbounded, per round', spread(ring.bounded.map((b, i) => b / (ring.unbounded[i] as number))))
  report('background 256 MiB printer, one unbounded log', speedAndDisk(log.unbounded))
  report('  the same rotating within logBytes = 8 MiB', speedAndDisk(log.bounded))
  report('  throughput ratio rotating / unbounded, per round', spread(log.bounded.map((b, i) => b.mibPerS / (log.unbounded[i]?.mibPerS as number))))
  report('3 shell_run floods of 96 MiB, unbounded spool', speedAndDisk(spool.unbounded))
  report('  the same within spoolBytes = 128 MiB', speedAndDisk(spool.bounded))
  report('  throughput ratio budget / unbounded, per round', spread(spool.bounded.map((b, i) => b.mibPerS / (spool.unbounded[i]?.mibPerS as number))))
} finally {
  rmSync(root, { recursive: true, force: true })
}

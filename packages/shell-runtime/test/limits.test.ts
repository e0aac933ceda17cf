import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { setTimeout as sleep } from 'node:timers/promises'
import { CUT_LINE_MARK, shellBackground, shellRun } from '@hands/contracts'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { alive, eventually, jobProcesses, logsUntil, makeRuntime, rejection, valid } from './helpers.ts'

const KiB = 1024
const MiB = 1024 * KiB

setFlagsFromString('--expose-gc')
const runGc = runInNewContext('gc') as () => void

/** Collect garbage until external memory settles (V8 frees array buffers in the background). */
async function settledArrayBuffers(): Promise<number> {
  let last = Number.POSITIVE_INFINITY
  for (let i = 0; i < 10; i++) {
    runGc()
    await sleep(50)
    const now = process.memoryUsage().arrayBuffers
    if (now >= last - 64 * 1024) return now
    last = now
  }
  return last
}

type Runtime = ReturnType<typeof makeRuntime>['rt']

async function exited(rt: Runtime, id: string): Promise<void> {
  await eventually(() => (rt.resources().find((r) => r.id === id)?.status === 'exited' ? true : undefined), 60_000, `${id} to exit`)
}

/** The path a note says the whole (or the first part of the) stream is in. */
function pathIn(note: string | null | undefined): string {
  const m = /(\/\S+?\.(?:stdout|stderr))\b/.exec(note ?? '')
  if (m === null) throw new Error(`no spool path in note: ${note}`)
  return m[1] as string
}

/** Bytes of every shell_run spool file in the session's spool directory. */
function spoolBytes(dir: string): number {
  let total = 0
  for (const name of readdirSync(dir)) if (/\.(stdout|stderr)$/.test(name)) total += statSync(join(dir, name)).size
  return total
}

/** `seq 1 n` as a terminal shows it: every line ends in CR LF. */
function seqBytes(n: number): number {
  let total = 0
  for (let i = 1; i <= n; i++) total += String(i).length + 2
  return total
}

describe('a background log is bounded by logBytes', () => {
  it('says in the resource why the log stopped taking output when it cannot rotate, and the shell goes on', async () => {
    const { rt } = makeRuntime({ logBytes: 64 * 1024 })
    const b = await rt.shell_background({ commands: ['read _; seq 1 100000; sleep 30'] })
    const logPath = rt.resources()[0]?.log_path as string
    expect(rt.resources()[0]?.log_error).toBeNull()
    // The log's file goes (as when its folder is cleaned from outside): the next rotation cannot rename it.
    rmSync(logPath)
    await rt.shell_type({ id: b.id, text: '\n' })
    const failed = async () => {
      for (let i = 0; i < 200; i++) {
        const error = rt.resources()[0]?.log_error
        if (error) return error
        await new Promise((r) => setTimeout(r, 50))
      }
      return null
    }
    expect(await failed()).toMatch(/^ENOENT: /)
    expect(rt.resources()[0]?.status).toBe('running')
    await rt.shell_stop({ id: b.id })
  }, 120_000)

  it('keeps the newest bytes in log_path and log_path.1, never more than logBytes, and counts what it dropped', async () => {
    const { rt } = makeRuntime({ logBytes: MiB })
    // 1.5 million lines, ~13 MB through the terminal: thirteen times the bound.
    const b = await rt.shell_background({ commands: ['seq 1 1500000'] })
    const logPath = rt.resources()[0]?.log_path as string
    await exited(rt, b.id)
    const current = readFileSync(logPath, 'latin1')
    const previous = readFileSync(`${logPath}.1`, 'latin1')
    expect(current.length).toBeLessThanOrEqual(MiB / 2)
    expect(previous.length).toBe(MiB / 2)
    const res = rt.resources()[0] as unknown as Record<string, unknown>
    expect(res['log_previous_path']).toBe(`${logPath}.1`)
    // What is kept is the newest part, whole: consecutive numbers up to the last one.
    const kept = previous + current
    expect(kept.endsWith('1499999\r\n1500000\r\n')).toBe(true)
    const numbers = kept
      .slice(kept.indexOf('\r\n') + 2, -2)
      .split('\r\n')
      .map(Number)
    for (let i = 1; i < numbers.length; i++) if (numbers[i] !== (numbers[i - 1] as number) + 1) throw new Error(`gap after ${numbers[i - 1]}`)
    expect(res['log_dropped_bytes']).toBe(seqBytes(1500000) - kept.length)
    // Stopping the shell removes both parts.
    await rt.shell_stop({ id: b.id })
    expect(existsSync(logPath)).toBe(false)
    expect(existsSync(`${logPath}.1`)).toBe(false)
  }, 240_000)

  it('stays bounded while a `yes` floods it, and the flood is stopped with its whole tree', async () => {
    const { rt } = makeRuntime({ logBytes: 2 * MiB })
    const b = await rt.shell_background({ commands: ['yes'] })
    const logPath = rt.resources()[0]?.log_path as string
    const size = (p: string) => (existsSync(p) ? statSync(p).size : 0)
    let peak = 0
    await eventually(
      () => {
        peak = Math.max(peak, size(logPath) + size(`${logPath}.1`))
        const dropped = (rt.resources()[0] as unknown as Record<string, number>)['log_dropped_bytes'] ?? 0
        // On a build without the bound the log just grows: fail as soon as it passes it.
        if (peak > 2 * MiB) throw new Error(`the log holds ${peak} bytes, over the 2 MiB bound`)
        return dropped > 16 * MiB ? true : undefined
      },
      60_000,
      '16 MiB of `yes` to be dropped',
    )
    expect(peak).toBeLessThanOrEqual(2 * MiB)
    await rt.shell_stop({ id: b.id })
    expect(alive(b.pid)).toBe(false)
  }, 240_000)
})

describe('shell_run spool files share one session budget (spoolBytes)', () => {
  it('removes the oldest files first, says so, and a later note or read of a removed file says it is gone', async () => {
    const { rt } = makeRuntime({ headBytes: KiB, tailBytes: KiB, spoolBytes: MiB })
    const flood = (n: number, ch: string) => `head -c ${n} /dev/zero | tr '\\0' ${ch}`

    const r1 = valid(shellRun, await rt.shell_run({ commands: [flood(600_000, 'a')] }))
    const p1 = pathIn(r1.commands[0]?.note)
    expect(statSync(p1).size).toBe(600_000)

    // The second flood needs the room the first one takes: the first file goes.
    const r2 = valid(shellRun, await rt.shell_run({ commands: [flood(600_000, 'b')] }))
    const p2 = pathIn(r2.commands[0]?.note)
    expect(statSync(p2).size).toBe(600_000)
    expect(existsSync(p1)).toBe(false)
    expect(r2.commands[0]?.note).toContain('1 MiB')
    expect(r2.commands[0]?.note).toContain(p1.slice(p1.lastIndexOf('/') + 1))
    expect(spoolBytes(rt.spoolDir)).toBeLessThanOrEqual(MiB)

    // A later command that reads the removed file is told it is gone, and why.
    const r3 = valid(shellRun, await rt.shell_run({ commands: [`cat ${p1}`, `wc -c < ${p2}`] }))
    expect(r3.commands[0]?.exit).not.toBe(0)
    expect(r3.commands[0]?.note).toMatch(/removed/)
    expect(r3.commands[0]?.note).toContain(p1.slice(p1.lastIndexOf('/') + 1))
    expect(r3.commands[0]?.note).toContain('1 MiB')
    expect(r3.commands[1]?.stdout.trim()).toBe('600000')
    expect(r3.commands[1]?.note).toBeNull()

    // Within one call: the second command's file pushes out the first's, and the first note says so.
    const r4 = valid(shellRun, await rt.shell_run({ commands: [flood(600_000, 'c'), flood(600_000, 'd')] }))
    const p4 = pathIn(r4.commands[0]?.note)
    expect(existsSync(p4)).toBe(false)
    expect(r4.commands[0]?.note).toMatch(/removed/)
    expect(r4.commands[0]?.note).not.toMatch(/the whole stream is in/)
    expect(statSync(pathIn(r4.commands[1]?.note)).size).toBe(600_000)
    expect(spoolBytes(rt.spoolDir)).toBeLessThanOrEqual(MiB)

    // One stream larger than the whole budget: its file keeps the first MiB, and the note says so.
    const r5 = valid(shellRun, await rt.shell_run({ commands: [flood(3_000_000, 'e')] }))
    const p5 = pathIn(r5.commands[0]?.note)
    expect(statSync(p5).size).toBe(MiB)
    expect(readFileSync(p5, 'latin1')).toBe('e'.repeat(MiB))
    expect(r5.commands[0]?.note).toMatch(/first 1 MiB/)
    expect(r5.commands[0]?.stdout.endsWith('e'.repeat(100))).toBe(true)
    expect(spoolBytes(rt.spoolDir)).toBeLessThanOrEqual(MiB)

    // A short stream cleaned for reading keeps its raw bytes in a file too; once pushed out, its note says so.
    const r6 = valid(shellRun, await rt.shell_run({ commands: ["printf '\\033[31mred\\033[0m\\n'", flood(2_000_000, 'f')] }))
    expect(r6.commands[0]?.stdout).toBe('red\n')
    expect(r6.commands[0]?.note).toMatch(/cleaned for reading/)
    expect(r6.commands[0]?.note).toMatch(/removed since/)
    expect(r6.commands[0]?.note).not.toMatch(/raw bytes are in/)
  }, 240_000)

  it('tells a background shell that reads a removed spool file that it is gone', async () => {
    const { rt } = makeRuntime({ headBytes: KiB, tailBytes: KiB, spoolBytes: MiB })
    const r1 = await rt.shell_run({ commands: ["head -c 700000 /dev/zero | tr '\\0' a", "head -c 700000 /dev/zero | tr '\\0' b"] })
    const gone = pathIn(r1.commands[0]?.note)
    expect(existsSync(gone)).toBe(false)
    const b = valid(shellBackground, await rt.shell_background({ commands: [`cat ${gone}`] }))
    expect(b.note).toMatch(/removed/)
    expect(b.note).toContain(gone.slice(gone.lastIndexOf('/') + 1))
  }, 120_000)
})

describe('background shells per session are capped (maxShells)', () => {
  it('refuses one more shell with limit_reached and a hint to stop one, starting nothing', async () => {
    const { rt } = makeRuntime({ maxShells: 3 })
    await rt.shell_background({ commands: ['sleep 1000'], id: 'a' })
    await rt.shell_background({ commands: ['sleep 1000'], id: 'b' })
    await rt.shell_background({ commands: ['true'], id: 'done' })
    await exited(rt, 'done')
    const before = jobProcesses().length
    // An exited shell still holds its lines and log, so it counts.
    const err = await rejection(rt.shell_background({ commands: ['sleep 1000'], id: 'c' }))
    expect(err.code).toBe('limit_reached')
    expect(err.is_preflight).toBe(true)
    expect(err.message).toContain('3')
    expect(err.hint).toContain('shell_stop')
    expect(err.hint).toContain('`done`')
    expect(
      rt
        .resources()
        .map((r) => r.id)
        .sort(),
    ).toEqual(['a', 'b', 'done'])
    expect(jobProcesses().length).toBe(before)
    // At the cap, a live script is still returned, and an exited id is still replaced.
    expect((await rt.shell_background({ commands: ['sleep 1000'], id: 'a' })).is_already_running).toBe(true)
    const replaced = await rt.shell_background({ commands: ['sleep 1000'], id: 'done' })
    expect(replaced).toMatchObject({ status: 'running', is_already_running: false })
    // Stopping one makes room.
    await rt.shell_stop({ id: 'b' })
    expect((await rt.shell_background({ commands: ['sleep 1000'], id: 'c' })).status).toBe('running')
  })

  it('holds the cap when many shells are asked for at once', async () => {
    const { rt } = makeRuntime({ maxShells: 4 })
    const calls = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => rt.shell_background({ commands: [`sleep 100${i}`] })))
    expect(calls.filter((c) => c.status === 'fulfilled')).toHaveLength(4)
    expect(calls.filter((c) => c.status === 'rejected' && (c.reason as { code?: string }).code === 'limit_reached')).toHaveLength(8)
    expect(rt.resources()).toHaveLength(4)
  })
})

describe("a background shell's history is bounded in bytes (ringBytes), not only in rows", () => {
  it('keeps only the rows ringBytes pays for, and counts every other line as dropped', async () => {
    // 256 KiB at 200 columns: floor(262144 / (200 × 12 + 512)) = 90 rows of history, plus the 50-row screen.
    const { rt } = makeRuntime({ ringBytes: 256 * KiB })
    // 1,000 lines of 4,000 characters: 20,000 rows of 200 columns, twice the 10,000 rows ringLines allows.
    const b = await rt.shell_background({
      commands: [`awk 'BEGIN { s = sprintf("%3996s", ""); gsub(/ /, "x", s); for (i = 1; i <= 1000; i++) printf "%04d%s\\n", i, s }'`],
    })
    await exited(rt, b.id)
    const kept = rt.retainedLines(b.id) as string[]
    const rows = kept.reduce((n, l) => n + Math.ceil(l.replace(CUT_LINE_MARK, '').length / 200), 0)
    expect(rows).toBeLessThanOrEqual(90 + 50)
    expect(rows).toBeGreaterThan(50)
    expect(kept.at(-1)?.startsWith('1000x')).toBe(true)
    const r = await rt.shell_logs({ id: b.id, n: 2000 })
    expect(r.lines).toEqual(kept)
    // Every line is kept (the oldest perhaps cut, its start gone) or counted as dropped, once.
    expect(r.dropped_lines + kept.length).toBe(1000)
  }, 120_000)
})

describe('shell_type input waits in a bounded queue (typeQueueBytes)', () => {
  const errors = vi.spyOn(console, 'error')
  afterEach(() => {
    errors.mockClear()
  })

  it('refuses text that would pass the queue with limit_reached, and writes none of it', async () => {
    const { rt, root } = makeRuntime({ typeQueueBytes: 256 * KiB })
    // Raw mode, so the terminal passes bytes as they come; nothing reads until `go` exists.
    const b = await rt.shell_background({ commands: ['stty raw -echo', 'echo ready', 'while [ ! -e go ]; do sleep 0.05; done', 'head -c 255000 > got'] })
    await logsUntil(rt, b.id, (l) => l.includes('ready'))
    // The terminal takes some kilobytes itself; the rest waits in the queue.
    await rt.shell_type({ id: b.id, text: 'a'.repeat(250_000), is_enter: false })
    const err = await rejection(rt.shell_type({ id: b.id, text: 'X'.repeat(100_000), is_enter: false }))
    expect(err.code).toBe('limit_reached')
    expect(err.is_preflight).toBe(true)
    expect(err.message).toContain('256 KiB')
    expect(err.hint).toMatch(/shell_stop|shell_logs/)
    await rt.shell_type({ id: b.id, text: 'b'.repeat(5_000), is_enter: false })
    writeFileSync(join(root, 'go'), '')
    await exited(rt, b.id)
    const got = readFileSync(join(root, 'got'), 'latin1')
    expect(got).toBe('a'.repeat(250_000) + 'b'.repeat(5_000))
    await rt.shell_stop({ id: b.id })
  }, 120_000)

  it('releases queued input when the shell is stopped, and logs no unhandled pty write error', async () => {
    const { rt } = makeRuntime({ typeQueueBytes: 64 * MiB })
    // Raw mode: the terminal holds what it took and takes no more (a canonical one drops a line's excess).
    const b = await rt.shell_background({ commands: ['stty raw -echo', 'echo ready', 'sleep 1000'] })
    await logsUntil(rt, b.id, (l) => l.includes('ready'))
    const base = await settledArrayBuffers()
    for (let i = 0; i < 5; i++) await rt.shell_type({ id: b.id, text: 'x'.repeat(8 * MiB), is_enter: false })
    expect(process.memoryUsage().arrayBuffers - base).toBeGreaterThan(20 * MiB)
    await rt.shell_stop({ id: b.id })
    await sleep(500)
    expect((await settledArrayBuffers()) - base).toBeLessThan(4 * MiB)
    expect(errors.mock.calls.map((c) => String(c[0]))).not.toContainEqual(expect.stringContaining('pty write'))
  }, 120_000)

  it('drops input left unread when the script exits, without an unhandled error', async () => {
    const { rt } = makeRuntime()
    const b = await rt.shell_background({ commands: ['stty raw -echo', 'echo ready', 'sleep 0.5'] })
    await logsUntil(rt, b.id, (l) => l.includes('ready'))
    await rt.shell_type({ id: b.id, text: 'y'.repeat(512 * KiB), is_enter: false })
    await exited(rt, b.id)
    await sleep(700) // past node-pty's 200 ms socket teardown
    expect(errors.mock.calls.map((c) => String(c[0]))).not.toContainEqual(expect.stringContaining('pty write'))
    expect((await rejection(rt.shell_type({ id: b.id, text: 'late' }))).code).toBe('not_running')
  }, 120_000)
})

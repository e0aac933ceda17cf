/**
 * `pnpm bench terminal`: the background shells' screen model against baselines measured in the
 * same run — a 256 MiB printer (`yes`) through shell_background against raw node-pty counting
 * (and against node-pty with a headless xterm parsing every byte, which is why plain lines are
 * held back), a CPU-bound 128 MiB printer (`tr` + `fold`) and one that pauses between 2 MiB
 * bursts the same way, each with this process's CPU per MiB beside its throughput, a screen's push of
 * 4 KiB chunks with the SIMD plain-bytes check against the JavaScript one, shell_logs over backspace-heavy lines against plain lines, memory per screen with a full
 * history against a bare headless xterm with the same history. Rounds are interleaved so load
 * from elsewhere falls on both sides; min–median–max.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { inTurn, median, spread } from './timings.ts'
import { createShellRuntime } from '@hands/shell-runtime'
import { waitExited } from './wait-exited.ts'
import { Screen } from '../../packages/shell-runtime/src/screen/screen.ts'
import { useSimdScan } from '../../packages/shell-runtime/src/screen/plain-tail.ts'

const require = createRequire(import.meta.url)
const pty = require('node-pty') as typeof import('node-pty')
const MiB = 1024 * 1024
const BYTES = 256 * MiB
const PRINTER = `yes ${'x'.repeat(99)} | head -c ${BYTES}`
const FOLD_BYTES = 128 * MiB
/** A CPU-bound printer that keeps both cores busy: `fold` writes each 99-character line to the terminal with its own write(2). */
const FOLDER = `head -c ${FOLD_BYTES} /dev/zero | tr '\\0' x | fold -w 99`
const BURST_BYTES = 64 * MiB
/** A printer that pauses: 2 MiB of lines, 0.1 s of quiet, 32 times. */
const BURSTS = `for i in $(seq 32); do yes ${'x'.repeat(99)} | head -c ${2 * MiB}; sleep 0.1; done`
const ROUNDS = Number(process.env['HANDS_BENCH_ROUNDS'] ?? 5)
const MEMORY_ROUNDS = 3
/** The part of @xterm/headless's Terminal the memory baseline uses. */
interface BareTerminal {
  write(data: Uint8Array, done: () => void): void
  dispose(): void
}
/** shell-runtime's folder: the bench resolves the xterm it uses from there. */
const SHELL_RUNTIME = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'packages', 'shell-runtime')

function report(what: string, figure: string, verdict = '') {
  console.log(`${what.padEnd(62)} ${figure.padEnd(30)} ${verdict}`)
}

/** One flood read to the end: throughput, and this process's CPU (user + system, every thread) per MiB. */
interface Flood {
  mibPerS: number
  cpuPerMiB: number
}

/** CPU milliseconds this process has used so far (every thread: the event loop and libuv's pool). */
function cpuMs(): number {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

function rawPty(script: string, screen?: Screen): Promise<Flood> {
  return new Promise((resolve) => {
    let bytes = 0
    const t = performance.now()
    const cpu = cpuMs()
    const p = pty.spawn('bash', ['-c', script], { name: 'xterm-256color', cols: 200, rows: 50, encoding: null })
    p.onData((d) => {
      bytes += d.length
      screen?.push(d as unknown as Buffer)
    })
    p.onExit(() => {
      const mib = bytes / MiB
      resolve({ mibPerS: mib / ((performance.now() - t) / 1000), cpuPerMiB: (cpuMs() - cpu) / mib })
    })
  })
}

const root = realpathSync(mkdtempSync(join(tmpdir(), 'hands-bench-terminal-')))
const rt = createShellRuntime({ roots: [root] })

/** shell_background of `script` (`bytes` long) from the call to its last line read back once it has exited. */
async function background(script: string, bytes: number): Promise<Flood> {
  const t = performance.now()
  const cpu = cpuMs()
  await rt.shell_background({ commands: [script], id: 'printer' })
  await waitExited(rt, 'printer')
  const last = (await rt.shell_logs({ id: 'printer', n: 1 })).lines.at(-1) ?? ''
  const mib = bytes / MiB
  const flood = { mibPerS: mib / ((performance.now() - t) / 1000), cpuPerMiB: (cpuMs() - cpu) / mib }
  if (!last.startsWith('x')) throw new Error(`the printer's last line reads ${JSON.stringify(last)}`)
  await rt.shell_stop({ id: 'printer' })
  return flood
}

/** Throughput and CPU per MiB of each kind, and the ratios of `kind` to `base` round by round. */
function reportFloods(what: string, floods: Record<string, Flood[]>, base: string, target: number) {
  for (const [kind, xs] of Object.entries(floods)) {
    report(
      `${what}: ${kind} (MiB/s; CPU ms per MiB)`,
      `${spread(
        xs.map((x) => x.mibPerS),
        0,
      )}; ${spread(
        xs.map((x) => x.cpuPerMiB),
        1,
      )}`,
    )
  }
  const raw = floods[base] as Flood[]
  for (const [kind, xs] of Object.entries(floods)) {
    if (kind === base) continue
    const ratio = xs.map((x, i) => x.mibPerS / (raw[i] as Flood).mibPerS)
    const cpu = xs.map((x, i) => x.cpuPerMiB / (raw[i] as Flood).cpuPerMiB)
    const verdict = kind === 'shell_background' ? `${median(ratio) >= target ? 'ok' : 'MISSED'} (target ≥ ${target}x, median)` : ''
    report(`  ${kind} / ${base}: throughput; CPU per MiB`, `${spread(ratio)}; ${spread(cpu)}`, verdict)
  }
}

try {
  await rt.shell_run({ commands: ['true'] })
  // 1. Throughput and this process's CPU per MiB, rounds interleaved (each kind takes every place
  // in turn): raw node-pty counting, node-pty + xterm parsing every byte, shell_background read to
  // the end. First a fast printer (`yes`, the PTY is the bottleneck), then a CPU-bound one (`tr`
  // + `fold`, which writes a line per system call to a terminal): there the printer, the PTY's
  // kernel work and this process share two cores, so what hands spends per byte beyond reading
  // the PTY is throughput lost.
  const yes: Record<string, Flood[]> = { 'raw node-pty': [], 'node-pty + xterm': [], shell_background: [] }
  for (let r = 0; r < ROUNDS; r++) {
    await inTurn(r, [
      async () => yes['raw node-pty']?.push(await rawPty(PRINTER)),
      async () => {
        const screen = new Screen({ cols: 200, rows: 50, scrollback: 10_000, isHoldingBack: false })
        yes['node-pty + xterm']?.push(await rawPty(PRINTER, screen))
        screen.dispose()
      },
      async () => yes['shell_background']?.push(await background(PRINTER, BYTES)),
    ])
  }
  reportFloods('yes, 256 MiB', yes, 'raw node-pty', 0.9)
  const fold: Record<string, Flood[]> = { 'raw node-pty': [], shell_background: [] }
  for (let r = 0; r < ROUNDS; r++) {
    await inTurn(r, [
      async () => fold['raw node-pty']?.push(await rawPty(FOLDER)),
      async () => fold['shell_background']?.push(await background(FOLDER, FOLD_BYTES)),
    ])
  }
  reportFloods('tr + fold, 128 MiB', fold, 'raw node-pty', 0.8)
  // A printer that stops now and then, as one does between steps or on a loaded machine: what is
  // held while it prints is parsed only once it has been quiet for a while, not at every stop.
  const bursts: Record<string, Flood[]> = { 'raw node-pty': [], shell_background: [] }
  for (let r = 0; r < ROUNDS; r++) {
    await inTurn(r, [
      async () => bursts['raw node-pty']?.push(await rawPty(BURSTS)),
      async () => bursts['shell_background']?.push(await background(BURSTS, BURST_BYTES)),
    ])
  }
  reportFloods('yes in 2 MiB bursts 0.1 s apart, 64 MiB', bursts, 'raw node-pty', 0.9)

  // What the plain-bytes check costs on the way in: a screen's push of the same fresh 4 KiB chunks
  // of 100-character lines (64 MiB a round, each chunk its own buffer as a PTY read gives it), with
  // the SIMD check against the JavaScript check alone, rounds alternating; CPU of the pushes only.
  const line = Buffer.from(`${'x'.repeat(99)}\r\n`.repeat(Math.ceil((5 * MiB) / 101)))
  const pushCpu: Record<string, number[]> = { simd: [], javascript: [] }
  const pushRound = (isSimd: boolean): number => {
    useSimdScan(isSimd)
    const screen = new Screen({ cols: 200, rows: 50, scrollback: 10_000 })
    let spent = 0
    for (let batch = 0; batch < 16; batch++) {
      const chunks: Buffer[] = []
      for (let at = (batch * 37) % 101; chunks.length < 1024; at += 4096) chunks.push(Buffer.from(line.subarray(at, at + 4096)))
      const cpu = cpuMs()
      for (const c of chunks) screen.push(c, performance.now())
      spent += cpuMs() - cpu
    }
    screen.dispose()
    return spent / 64
  }
  pushRound(true)
  pushRound(false)
  for (let r = 0; r < ROUNDS; r++) {
    await inTurn(r, [async () => pushCpu['simd']?.push(pushRound(true)), async () => pushCpu['javascript']?.push(pushRound(false))])
  }
  useSimdScan(true)
  const [simdMs, jsMs] = [pushCpu['simd'], pushCpu['javascript']] as number[][]
  report('screen push, 4 KiB chunks, SIMD check (CPU ms per MiB)', spread(simdMs as number[], 2))
  report('screen push, 4 KiB chunks, JavaScript check (CPU ms per MiB)', spread(jsMs as number[], 2))
  report('  ratio SIMD / JavaScript, per round', spread((simdMs as number[]).map((m, i) => m / ((jsMs as number[])[i] as number))))

  // 2. shell_logs(n=2000) over 2,000 backspace-heavy lines against 2,000 plain lines of the same
  // length in bytes (4,094) and of the same width on screen (2,047).
  // ringBytes is raised so the history holds every wrapped row (2,000 lines of 11 rows each).
  const wide = createShellRuntime({ roots: [root], ringLines: 50_000, ringBytes: 256 * MiB })
  try {
    const script = (line: string) => `python3 -c "import sys; sys.stdout.write(${line} * 2000)"`
    await wide.shell_background({ commands: [script(`('a' * 2047 + '\\\\b' * 2047 + '\\\\n')`)], id: 'bs' })
    await wide.shell_background({ commands: [script(`('a' * 4094 + '\\\\n')`)], id: 'bytes' })
    await wide.shell_background({ commands: [script(`('a' * 2047 + '\\\\n')`)], id: 'width' })
    for (const id of ['bs', 'bytes', 'width']) await waitExited(wide, id)
    const times: Record<string, number[]> = { bs: [], bytes: [], width: [] }
    for (let r = 0; r < 15; r++) {
      for (const id of Object.keys(times)) {
        const t = performance.now()
        const got = await wide.shell_logs({ id, n: 2000 })
        times[id]?.push(performance.now() - t)
        if (got.lines.length !== 2000) throw new Error(`${id} returned ${got.lines.length} lines`)
      }
    }
    const [bs, bytes, width] = [times['bs'], times['bytes'], times['width']] as number[][]
    report('shell_logs(n=2000), 2,000 lines of a*2047 + BS*2047 (ms)', spread(bs as number[], 1))
    report('shell_logs(n=2000), 2,000 plain lines of 4,094 bytes (ms)', spread(bytes as number[], 1))
    report('shell_logs(n=2000), 2,000 plain lines of 2,047 chars (ms)', spread(width as number[], 1))
    const r1 = median(bs as number[]) / median(bytes as number[])
    const r2 = median(bs as number[]) / median(width as number[])
    report(
      '  ratio backspace-heavy / plain (same bytes; same width)',
      `${r1.toFixed(2)}; ${r2.toFixed(2)}`,
      `${Math.max(r1, r2) <= 3 ? 'ok' : 'MISSED'} (target ≤ 3x)`,
    )
  } finally {
    await wide.close()
  }

  // 3. Memory per screen with a full history: screens holding 10,000 rows of history plus the
  // 200x50 screen, every row parsed, against bare @xterm/headless terminals of the same size and
  // scrollback fed the same lines (the same copy of xterm the screen uses, resolved from
  // shell-runtime). Measured as JS heap plus ArrayBuffers (where xterm keeps its rows) after
  // collection: RSS keeps what the sections above freed, so its growth here says little. Rounds
  // alternate which kind goes first; each kind is disposed before the next is measured.
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const used = () => {
    gc()
    gc()
    const m = process.memoryUsage()
    return m.heapUsed + m.arrayBuffers
  }
  const { Terminal } = createRequire(join(SHELL_RUNTIME, 'package.json'))('@xterm/headless') as { Terminal: new (options: object) => BareTerminal }
  const lines = Buffer.from(Array.from({ length: 20_000 }, (_, i) => `${String(i).padStart(6, '0')} ${'x'.repeat(93)}\r\n`).join(''))
  const perScreen: number[] = []
  const perTerminal: number[] = []
  /** MiB per item of 10 made by `make`, measured while all 10 are alive, then `drop` each. */
  const perItem = async <T>(make: () => Promise<T>, drop: (x: T) => void): Promise<number> => {
    const before = used()
    const items: T[] = []
    for (let i = 0; i < 10; i++) items.push(await make())
    const mib = (used() - before) / 10 / MiB
    for (const x of items) drop(x)
    return mib
  }
  const screenOnce = async () => {
    const s = new Screen({ cols: 200, rows: 50, scrollback: 10_000, isHoldingBack: false })
    s.push(lines)
    return s
  }
  const terminalOnce = async () => {
    const t = new Terminal({ cols: 200, rows: 50, scrollback: 10_000, allowProposedApi: true, logLevel: 'off' })
    await new Promise<void>((resolve) => t.write(lines, resolve))
    return t
  }
  for (let r = 0; r < MEMORY_ROUNDS; r++) {
    await inTurn(r, [
      async () => perScreen.push(await perItem(screenOnce, (s) => s.dispose())),
      async () => perTerminal.push(await perItem(terminalOnce, (t) => t.dispose())),
    ])
  }
  report('memory per screen, full history: 10,000 rows + 200x50 (MiB)', spread(perScreen, 1), `each of 10, ${MEMORY_ROUNDS} rounds; heap + buffers`)
  report('bare @xterm/headless Terminal, same size and lines (MiB)', spread(perTerminal, 1))
  report('  ratio screen / bare terminal, per round', spread(perScreen.map((m, i) => m / (perTerminal[i] as number))))
} finally {
  await rt.close()
  rmSync(root, { recursive: true, force: true })
}

/**
 * `pnpm bench shell`: the shell runtime against raw Node baselines measured in the same run.
 * Prints per-call costs, throughputs, peak RSS growth and the ratios the issue sets targets for.
 */
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { median, rawSpawn, timed } from './timings.ts'
import { createShellRuntime } from '@hands/shell-runtime'
import { waitExited } from './wait-exited.ts'

const require = createRequire(import.meta.url)
const pty = require('node-pty') as typeof import('node-pty')
const here = dirname(fileURLToPath(import.meta.url))
const MiB = 1024 * 1024
const PRINTER_BYTES = 256 * MiB
/** A fast printer: 100-byte lines from `yes`, cut at 256 MiB. */
const PRINTER = `yes ${'x'.repeat(99)} | head -c ${PRINTER_BYTES}`

const rows: Array<[string, string, string]> = []
function report(what: string, figure: string, verdict = '') {
  rows.push([what, figure, verdict])
  console.log(`${what.padEnd(58)} ${figure.padEnd(34)} ${verdict}`)
}
function check(ok: boolean, target: string): string {
  return `${ok ? 'ok' : 'MISSED'} (target ${target})`
}

/** Run `fn` while sampling RSS; resolves to its result, seconds taken and peak RSS growth in MiB. */
async function measured<T>(fn: () => Promise<T>): Promise<{ value: T; seconds: number; rssMiB: number }> {
  const before = process.memoryUsage().rss
  let peak = before
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss)
  }, 5)
  const t = performance.now()
  const value = await fn()
  const seconds = (performance.now() - t) / 1000
  clearInterval(sampler)
  peak = Math.max(peak, process.memoryUsage().rss)
  return { value, seconds, rssMiB: (peak - before) / MiB }
}

function rawPty(script: string): Promise<number> {
  return new Promise((resolve) => {
    let bytes = 0
    const p = pty.spawn('bash', ['-c', script], { name: 'xterm-256color', cols: 200, rows: 50, encoding: null })
    p.onData((d) => {
      bytes += d.length
    })
    p.onExit(() => resolve(bytes))
  })
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    return stat[stat.lastIndexOf(')') + 2] !== 'Z'
  } catch {
    return false
  }
}

/** Pids of every live process in any job of a session of this process (cgroup path or marker). */
function jobProcesses(): number[] {
  const prefix = `hands-${process.pid}-`
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    try {
      if (!alive(Number(name))) continue
      if (readFileSync(`/proc/${name}/cgroup`, 'latin1').includes(`/${prefix}`)) out.push(Number(name))
      else if (readFileSync(`/proc/${name}/environ`).includes(`HANDS_JOB=${prefix}`)) out.push(Number(name))
    } catch {
      // gone
    }
  }
  return out
}

const root = realpathSync(mkdtempSync(join(tmpdir(), 'hands-bench-')))
const rt = createShellRuntime({ roots: [root] })
console.log(`tree tracking: ${rt.treeKind}; printer: ${PRINTER}\n`)

try {
  // 1. Per-call cost of shell_run(["true"]) against a raw spawn of `bash -c true`.
  await rt.shell_run({ commands: ['true'] }) // the one-time login-environment capture
  for (let i = 0; i < 20; i++) {
    await rawSpawn('true')
    await rt.shell_run({ commands: ['true'] })
  }
  // Interleaved one by one, so load from elsewhere on the machine falls on both sides alike.
  const spawnCalls = 600
  const rawTimes: number[] = []
  const runTimes: number[] = []
  for (let i = 0; i < spawnCalls; i++) {
    rawTimes.push(await timed(rawSpawn))
    runTimes.push(await timed(() => rt.shell_run({ commands: ['true'] })))
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
  const rawPer = median(rawTimes)
  const runPer = median(runTimes)
  report('raw spawn bash -c true, per call (median; mean)', `${rawPer.toFixed(2)} ms; ${mean(rawTimes).toFixed(2)} ms`)
  report('shell_run(["true"]), per call (median; mean)', `${runPer.toFixed(2)} ms; ${mean(runTimes).toFixed(2)} ms`)
  report('  ratio shell_run / raw (medians)', `${(runPer / rawPer).toFixed(2)}x`, check(runPer / rawPer <= 1.3, '≤ 1.3x'))

  // 2. A 256 MiB printer through shell_run against a raw pipe reader that only counts bytes;
  // 3. the same printer under a PTY, shell_background read to the end, against raw node-pty
  // onData counting. Three interleaved rounds each; the median round is reported.
  const pipeRounds: Array<{ raw: number; run: number; rawRss: number; runRss: number }> = []
  const ptyRounds: Array<{ raw: number; bg: number; rawRss: number; bgRss: number; last: string }> = []
  for (let round = 0; round < 3; round++) {
    let rawBytes = 0
    // A fresh runtime per round: closing it removes its spool files, so one round's page-cache
    // writeback does not load the next.
    const prt = createShellRuntime({ roots: [root] })
    await prt.shell_run({ commands: ['true'] })
    const rawPipe = await measured(() => rawSpawn(PRINTER, (n) => (rawBytes += n)))
    const runBig = await measured(() => prt.shell_run({ commands: [PRINTER] }))
    await prt.close()
    if (runBig.value.commands[0]?.exit !== 0 || rawBytes !== PRINTER_BYTES) throw new Error('the printer failed')
    pipeRounds.push({ raw: rawBytes / MiB / rawPipe.seconds, run: PRINTER_BYTES / MiB / runBig.seconds, rawRss: rawPipe.rssMiB, runRss: runBig.rssMiB })
    const rawPtyRun = await measured(() => rawPty(PRINTER))
    const bgRun = await measured(async () => {
      const b = await rt.shell_background({ commands: [PRINTER], id: 'printer' })
      await waitExited(rt, b.id)
      return rt.shell_logs({ id: b.id, n: 1 })
    })
    await rt.shell_stop({ id: 'printer' })
    ptyRounds.push({
      raw: PRINTER_BYTES / MiB / rawPtyRun.seconds,
      bg: PRINTER_BYTES / MiB / bgRun.seconds,
      rawRss: rawPtyRun.rssMiB,
      bgRss: bgRun.rssMiB,
      last: bgRun.value.lines.at(-1) ?? '',
    })
  }
  const mid = <T>(xs: T[], key: (x: T) => number): T => [...xs].sort((a, b) => key(a) - key(b))[1] as T
  const pipe = mid(pipeRounds, (r) => r.run / r.raw)
  const maxRunRss = Math.max(...pipeRounds.map((r) => r.runRss))
  report('raw pipe reader, 256 MiB', `${pipe.raw.toFixed(0)} MiB/s, RSS +${pipe.rawRss.toFixed(1)} MiB`)
  report('shell_run, 256 MiB (head+tail kept, whole stream spooled)', `${pipe.run.toFixed(0)} MiB/s, RSS +${pipe.runRss.toFixed(1)} MiB`)
  report(
    '  throughput ratio shell_run / raw (median of 3)',
    `${(pipe.run / pipe.raw).toFixed(2)}x (all: ${pipeRounds.map((r) => (r.run / r.raw).toFixed(2)).join(', ')})`,
    check(pipe.run / pipe.raw >= 0.8, '≥ 0.8x'),
  )
  report('  peak RSS growth (worst of 3)', `${maxRunRss.toFixed(1)} MiB`, check(maxRunRss <= 64, '≤ 64 MiB'))
  const ptyMid = mid(ptyRounds, (r) => r.bg / r.raw)
  const maxBgRss = Math.max(...ptyRounds.map((r) => r.bgRss))
  report('raw node-pty onData counting, 256 MiB', `${ptyMid.raw.toFixed(0)} MiB/s, RSS +${ptyMid.rawRss.toFixed(1)} MiB`)
  report('shell_background read to the end, 256 MiB (log + screen)', `${ptyMid.bg.toFixed(0)} MiB/s, RSS +${ptyMid.bgRss.toFixed(1)} MiB`)
  report(
    '  throughput ratio shell_background / raw (median of 3)',
    `${(ptyMid.bg / ptyMid.raw).toFixed(2)}x (all: ${ptyRounds.map((r) => (r.bg / r.raw).toFixed(2)).join(', ')})`,
    check(ptyMid.bg / ptyMid.raw >= 0.9, '≥ 0.9x'),
  )
  report('  peak RSS growth (worst of 3)', `${maxBgRss.toFixed(1)} MiB`, check(maxBgRss <= 64, '≤ 64 MiB'))
  report('  last line read back (first 12 chars)', JSON.stringify(ptyMid.last.slice(0, 12)))

  // 4. shell_logs(n=200) with a 1,000-line and a 100,000-line history.
  await rt.shell_background({ commands: ['seq 1 1000'], id: 'small' })
  await rt.shell_background({ commands: ['seq 1 100000'], id: 'large' })
  await waitExited(rt, 'small')
  await waitExited(rt, 'large')
  const calls = 5000
  let smallMs = 0
  let largeMs = 0
  for (let r = 0; r < 4; r++) {
    let t = performance.now()
    for (let i = 0; i < calls; i++) await rt.shell_logs({ id: 'small', n: 200 })
    smallMs += performance.now() - t
    t = performance.now()
    for (let i = 0; i < calls; i++) await rt.shell_logs({ id: 'large', n: 200 })
    largeMs += performance.now() - t
  }
  const smallUs = (smallMs * 1000) / (4 * calls)
  const largeUs = (largeMs * 1000) / (4 * calls)
  report('shell_logs(n=200), 1,000-line history', `${smallUs.toFixed(1)} µs per call`)
  report('shell_logs(n=200), 100,000-line history', `${largeUs.toFixed(1)} µs per call`)
  report('  ratio 100,000 / 1,000', `${(largeUs / smallUs).toFixed(2)}`, check(largeUs / smallUs <= 1.2, '≤ 1.2'))
  await rt.shell_stop({ id: 'small' })
  await rt.shell_stop({ id: 'large' })

  // 5. shell_stop of bash + 50 descendants (setsid, nohup, &), with and without SIGTERM ignorers.
  for (const [label, arg, grace] of [
    ['50-process tree', '', 2000],
    ['50-process tree, 5 ignore SIGTERM (2 s grace)', 'ignore-term', 2000],
  ] as const) {
    for (const tree of ['cgroup', 'marker'] as const) {
      if (tree === 'cgroup' && rt.treeKind !== 'cgroup') continue
      const srt = createShellRuntime({ roots: [root], tree, stopGraceMs: grace })
      const b = await srt.shell_background({ commands: [`bash ${join(here, 'fixtures', 'tree50.sh')} ${arg}`], id: 'tree' })
      for (;;) {
        const { lines } = await srt.shell_logs({ id: b.id, n: 5 })
        if (lines.includes('ready')) break
        await sleep(20)
      }
      const before = jobProcesses()
      const t = performance.now()
      await srt.shell_stop({ id: b.id })
      const ms = performance.now() - t
      const survivors = before.filter(alive).length + jobProcesses().length
      report(
        `shell_stop, ${label} [${tree}]`,
        `${before.length} processes, ${ms.toFixed(1)} ms to empty`,
        `${check(survivors === 0, '0 survivors')} ${survivors} survivors`,
      )
      await srt.close()
    }
  }
} finally {
  await rt.close()
  rmSync(root, { recursive: true, force: true })
}

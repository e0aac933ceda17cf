/**
 * `pnpm bench confine`: what kernel confinement costs a command, against baselines measured in
 * the same run: shell_run(["true"]) confined (auto: Landlock here) and unconfined (confine off)
 * against a raw spawn of `bash -c true`, the same `true` through @hands/sandbox's own API
 * (createSandbox().run), bubblewrap for reference, and the throughput of a
 * 256 MiB write into a root, confined against unconfined.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { median, rawSpawn, spread, timed } from './timings.ts'
import { createSandbox } from '@hands/sandbox'
import { createShellRuntime, type ShellRuntime } from '@hands/shell-runtime'

const MiB = 1024 * 1024
const WRITE_BYTES = 256 * MiB

function report(what: string, figure: string, verdict = '') {
  console.log(`${what.padEnd(58)} ${figure.padEnd(40)} ${verdict}`)
}
function check(ok: boolean, target: string): string {
  return `${ok ? 'ok' : 'MISSED'} (target ${target})`
}

const root = realpathSync(mkdtempSync(join(tmpdir(), 'hands-bench-confine-')))
const confined = createShellRuntime({ roots: [root] })
const unconfined = createShellRuntime({ roots: [root], confine: 'off' })
const sandbox = createSandbox({ roots: [root] })
/** `true` through the sandbox's API, its (empty) output read as a caller would. */
async function runTrue(): Promise<unknown> {
  const job = await sandbox.run('true')
  job.stdout.resume()
  job.stderr.resume()
  return job.done
}
let bwrap: ShellRuntime | null = null
try {
  bwrap = createShellRuntime({ roots: [root], confine: 'bwrap' })
} catch (e) {
  console.log(`bubblewrap: not measured (${(e as Error).message})`)
}
console.log(`confined: ${confined.confinement.summary.split('\n')[0]}\n`)

try {
  // 1. Per-call cost, interleaved one by one so load from elsewhere falls on every side alike.
  for (const rt of [confined, unconfined, bwrap]) await rt?.shell_run({ commands: ['true'] })
  for (let i = 0; i < 20; i++) {
    await rawSpawn()
    await confined.shell_run({ commands: ['true'] })
    await unconfined.shell_run({ commands: ['true'] })
  }
  const calls = 600
  const raw: number[] = []
  const on: number[] = []
  const off: number[] = []
  const bw: number[] = []
  const api: number[] = []
  for (let i = 0; i < calls; i++) {
    raw.push(await timed(rawSpawn))
    on.push(await timed(() => confined.shell_run({ commands: ['true'] })))
    api.push(await timed(() => runTrue()))
    off.push(await timed(() => unconfined.shell_run({ commands: ['true'] })))
    if (bwrap !== null && i % 6 === 0) bw.push(await timed(() => (bwrap as ShellRuntime).shell_run({ commands: ['true'] })))
  }
  report('raw spawn bash -c true, per call (min–median–max)', `${spread(raw)} ms`)
  report(`shell_run(["true"]) confined (${confined.confinement.kind})`, `${spread(on)} ms`)
  report('shell_run(["true"]) unconfined (confine off)', `${spread(off)} ms`)
  report('  ratio confined / raw (medians)', `${(median(on) / median(raw)).toFixed(2)}x`, check(median(on) / median(raw) <= 1.3, '≤ 1.3x'))
  report('  ratio unconfined / raw (medians)', `${(median(off) / median(raw)).toFixed(2)}x`)
  report('  ratio confined / unconfined (medians)', `${(median(on) / median(off)).toFixed(2)}x`)
  report(`createSandbox().run("true") (${sandbox.kind})`, `${spread(api)} ms`)
  report('  ratio sandbox API / raw (medians)', `${(median(api) / median(raw)).toFixed(2)}x`)
  report('  ratio sandbox API / shell_run confined (medians)', `${(median(api) / median(on)).toFixed(2)}x`)
  if (bw.length > 0) {
    report('shell_run(["true"]) under bubblewrap (every 6th round)', `${spread(bw)} ms`)
    report('  ratio bubblewrap / raw (medians)', `${(median(bw) / median(raw)).toFixed(2)}x`)
  }

  // 2. A 256 MiB write into the root, confined and unconfined, interleaved rounds.
  const write = `head -c ${WRITE_BYTES} /dev/zero > big && rm big`
  const rounds = 5
  const tOn: number[] = []
  const tOff: number[] = []
  const tBw: number[] = []
  for (let r = 0; r < rounds; r++) {
    const a = await confined.shell_run({ commands: [write] })
    const b = await unconfined.shell_run({ commands: [write] })
    if (a.exit !== 0 || b.exit !== 0) throw new Error(`the write failed: ${a.commands[0]?.stderr}${b.commands[0]?.stderr}`)
    tOn.push(WRITE_BYTES / MiB / ((a.commands[0]?.duration_ms ?? 1) / 1000))
    tOff.push(WRITE_BYTES / MiB / ((b.commands[0]?.duration_ms ?? 1) / 1000))
    if (bwrap !== null) {
      const c = await bwrap.shell_run({ commands: [write] })
      tBw.push(WRITE_BYTES / MiB / ((c.commands[0]?.duration_ms ?? 1) / 1000))
    }
  }
  report('256 MiB write into a root, unconfined (MiB/s)', spread(tOff, 0))
  report(`256 MiB write into a root, confined (${confined.confinement.kind}) (MiB/s)`, spread(tOn, 0))
  report(
    '  throughput ratio confined / unconfined (medians)',
    `${(median(tOn) / median(tOff)).toFixed(2)}x`,
    check(median(tOn) / median(tOff) >= 0.95, '≥ 0.95x'),
  )
  if (tBw.length > 0) {
    report('256 MiB write into a root, bubblewrap (MiB/s)', spread(tBw, 0))
    report('  throughput ratio bubblewrap / unconfined (medians)', `${(median(tBw) / median(tOff)).toFixed(2)}x`)
  }
} finally {
  await Promise.all([confined.close(), unconfined.close(), bwrap?.close(), sandbox.close()])
  rmSync(root, { recursive: true, force: true })
}

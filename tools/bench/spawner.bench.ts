/**
 * `pnpm bench spawner`: the per-call cost of shell_run(["true"]) with the session's spawner (jobs
 * forked by `hands-confine --spawner`), without it (Node's spawn forks the server), and a raw
 * piped `child_process.spawn` of `bash -c true` from the same process, as wall time and as the
 * server's own CPU per call (process.cpuUsage: what a fork of the server costs shows there).
 *
 * Each round runs CALLS calls of every side, one side after another in a rotating order, and
 * reports the median of each; the figures are min – median – max over the rounds. The same again
 * with BALLAST_MIB of touched heap in the server, where a fork of it copies more page tables.
 * BENCH_CONFINE (auto, landlock, bwrap, off) and BENCH_CHANGES=0 pick the sessions' confinement and
 * account of changes, to see the spawn apart from what confining and observing a job costs.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createShellRuntime, type ShellRuntime } from '@hands/shell-runtime'
import { inTurn, median, rawSpawn, spread } from './timings.ts'

const ROUNDS = Math.max(5, Number(process.env['BENCH_ROUNDS'] ?? 7))
const CALLS = Math.max(20, Number(process.env['BENCH_CALLS'] ?? 100))
const BALLAST_MIB = Number(process.env['BENCH_BALLAST_MIB'] ?? 160)

const CONFINE = (process.env['BENCH_CONFINE'] ?? 'auto') as 'auto' | 'landlock' | 'bwrap' | 'off'
const CHANGES = process.env['BENCH_CHANGES'] !== '0'

const root = realpathSync(mkdtempSync(join(tmpdir(), 'hands-bench-spawner-')))
const withSpawner = createShellRuntime({ roots: [root], confine: CONFINE, changes: CHANGES })
const without = createShellRuntime({ roots: [root], confine: CONFINE, changes: CHANGES, spawner: false })
console.log(`confinement: ${withSpawner.confinement.kind}; account of changes: ${CHANGES ? 'on' : 'off'}`)

async function runTrue(rt: ShellRuntime): Promise<void> {
  const r = await rt.shell_run({ commands: ['true'] })
  if (r.commands[0]?.exit !== 0) throw new Error(`shell_run(["true"]) failed: ${JSON.stringify(r.commands[0])}`)
}

interface Side {
  name: string
  call: () => Promise<unknown>
  /** Per round: median wall ms per call, and the server's CPU ms per call. */
  wall: number[]
  cpu: number[]
}

async function measure(side: Side): Promise<void> {
  const times: number[] = []
  const before = process.cpuUsage()
  for (let i = 0; i < CALLS; i++) {
    const t = performance.now()
    await side.call()
    times.push(performance.now() - t)
  }
  const used = process.cpuUsage(before)
  side.wall.push(median(times))
  side.cpu.push((used.user + used.system) / 1000 / CALLS)
}

async function phase(title: string): Promise<void> {
  const sides: Side[] = [
    { name: 'raw child_process.spawn bash -c true', call: () => rawSpawn('true'), wall: [], cpu: [] },
    { name: 'shell_run(["true"]) with the spawner', call: () => runTrue(withSpawner), wall: [], cpu: [] },
    { name: 'shell_run(["true"]) without (Node spawn)', call: () => runTrue(without), wall: [], cpu: [] },
  ]
  for (let i = 0; i < 10; i++) for (const s of sides) await s.call()
  for (let round = 0; round < ROUNDS; round++)
    await inTurn(
      round,
      sides.map((s) => () => measure(s)),
    )
  const [raw, spawner, node] = sides as [Side, Side, Side]
  const ratio = (a: number[], b: number[]) => a.map((x, k) => x / (b[k] as number))
  console.log(`\n${title} (rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB; ${ROUNDS} rounds × ${CALLS} calls; min – median – max over rounds)`)
  for (const s of sides) console.log(`  ${s.name.padEnd(44)} wall ${spread(s.wall, 2, 'ms')}   server CPU ${spread(s.cpu, 3, 'ms')}`)
  console.log(`  ${'wall: with the spawner / raw spawn'.padEnd(44)} ${spread(ratio(spawner.wall, raw.wall), 2, '×')}   (target ≤ 1.0×)`)
  console.log(`  ${'wall: without / raw spawn'.padEnd(44)} ${spread(ratio(node.wall, raw.wall), 2, '×')}`)
  console.log(`  ${'server CPU: with the spawner / without'.padEnd(44)} ${spread(ratio(spawner.cpu, node.cpu), 2, '×')}`)
  console.log(`  ${'server CPU: with the spawner / raw spawn'.padEnd(44)} ${spread(ratio(spawner.cpu, raw.cpu), 2, '×')}`)
}

try {
  await runTrue(withSpawner) // the one-time login-environment capture
  await runTrue(without)
  await phase('bare server')
  // Touched memory the way a large server holds it: a fork copies the page tables that map it.
  const ballast: Buffer[] = []
  for (let k = 0; k < BALLAST_MIB; k++) ballast.push(Buffer.alloc(2 ** 20, k))
  await phase(`server with +${BALLAST_MIB} MiB of touched heap`)
  if (ballast.length !== BALLAST_MIB) throw new Error('ballast lost')
} finally {
  await withSpawner.close()
  await without.close()
  rmSync(root, { recursive: true, force: true })
}

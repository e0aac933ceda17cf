/**
 * `pnpm bench pause`: what a pause before a call costs. `shell_run(["true"])` right after the call
 * before it and after a 50 ms pause, with per-job cgroups and with the environment marker, beside
 * a raw `bash -c true` spawn timed the same two ways. Moving a running process into a cgroup
 * (writing cgroup.procs) takes the kernel's cgroup_threadgroup_rwsem for writing, which waits for
 * an RCU grace period unless another move happened a moment before. The helper starts each job
 * inside its cgroup instead (clone3 with CLONE_INTO_CGROUP, which takes that lock only for
 * reading), so a call after a pause costs what any spawn after a pause costs; on Linux < 5.7 it
 * falls back to the move, and there every first call of a session and every call a model makes
 * after thinking pays the wait.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createShellRuntime, type ShellRuntime } from '@hands/shell-runtime'
import { median, rawSpawn, spread, timed } from './timings.ts'

const ROUNDS = 60
const PAUSE_MS = 50

const root = realpathSync(mkdtempSync(join(tmpdir(), 'hands-bench-pause-')))
const loginEnv = async () => ({ env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' }, source: 'host' as const, error: null })
const runtimes: Array<[string, ShellRuntime]> = [
  ['cgroup', createShellRuntime({ roots: [root], loginEnv, tree: 'cgroup' })],
  ['marker', createShellRuntime({ roots: [root], loginEnv, tree: 'marker' })],
]
try {
  const series = new Map<string, number[]>()
  const record = (name: string, ms: number) => {
    const list = series.get(name)
    if (list === undefined) series.set(name, [ms])
    else list.push(ms)
  }
  const calls: Array<[string, () => Promise<unknown>]> = [
    ['raw spawn bash -c true', rawSpawn],
    ...runtimes.map(([tree, rt]): [string, () => Promise<unknown>] => [`shell_run(["true"]), ${tree} trees`, () => rt.shell_run({ commands: ['true'] })]),
  ]
  for (const [, call] of calls) for (let i = 0; i < 5; i++) await call()
  for (let i = 0; i < ROUNDS; i++) {
    for (const [name, call] of calls) {
      await call()
      record(`${name}, right after a call`, await timed(call))
      await new Promise((r) => setTimeout(r, PAUSE_MS))
      record(`${name}, after a ${PAUSE_MS} ms pause`, await timed(call))
    }
  }
  console.log(`${ROUNDS} rounds; min – median – max\n`)
  for (const [name, times] of series) console.log(`${name.padEnd(64)} ${spread(times, 2, 'ms')}`)
  console.log('')
  for (const [name] of calls) {
    const ratio = median(series.get(`${name}, after a ${PAUSE_MS} ms pause`) ?? []) / median(series.get(`${name}, right after a call`) ?? [])
    console.log(`${`${name}: after a pause / right after`.padEnd(64)} ${ratio.toFixed(2)}x`)
  }
} finally {
  await Promise.all(runtimes.map(([, rt]) => rt.close()))
  rmSync(root, { recursive: true, force: true })
}

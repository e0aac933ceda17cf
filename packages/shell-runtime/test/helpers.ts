import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { checkResult, ToolError } from '@hands/contracts'
import fc from 'fast-check'
import { afterEach, expect, inject } from 'vitest'
import { createShellRuntime, describeConfinement, type ShellRuntime, type ShellRuntimeOptions } from '../src/index.ts'

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures')

/** The command line that starts host fixture `name` (test/fixtures/<name>.ts, built by global-setup.ts beside the built package) on plain node. */
export function hostArgv(
  name: 'host' | 'host-sessions' | 'effects-host' | 'pressure-host' | 'prompt-host' | 'side-doors',
  args: string[],
): [string, ...string[]] {
  return [process.execPath, join(inject('hostFixtures'), `${name}.mjs`), ...args]
}

/** The built package's entry as the host fixtures import it, where every user may read it (global-setup.ts). */
export function hostPackageEntry(): string {
  return join(inject('hostFixtures'), 'node_modules', '@hands', 'shell-runtime', 'dist', 'index.js')
}

/** Sessions of this test process are named `hands-<pid>-…`. */
const SESSION = `hands-${process.pid}-`

/** Pids of every live (non-zombie) process that belongs to a job of any runtime this test process made. */
export function jobProcesses(prefix = SESSION): number[] {
  const out: number[] = []
  const marker = Buffer.from(`HANDS_JOB=${prefix}`)
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const pid = Number(name)
    if (pid === process.pid) continue
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
      if (stat[stat.lastIndexOf(')') + 2] === 'Z') continue
      const cg = readFileSync(`/proc/${pid}/cgroup`, 'latin1')
      if (cg.includes(`/${prefix}`)) {
        out.push(pid)
        continue
      }
      const env = readFileSync(`/proc/${pid}/environ`)
      if (env.includes(marker)) out.push(pid)
    } catch {
      // gone, or not ours to read
    }
  }
  return out
}

/** True while `pid` is a live (non-zombie) process. */
export { isAlive as alive } from '../../sandbox/src/tree/proc.ts'

export { processesWhere } from './procs.ts'

/**
 * What a command that tried to SIGKILL the host's reaper must have achieved: unconfined, it
 * killed the one reaper and the host started another; confined, it could not touch it.
 */
export function expectReaperAttempt(confine: string, report: { before: number[]; after: number[]; killed: string }): void {
  expect(report.before).toHaveLength(1)
  if (confine === 'off') {
    expect(report.killed).toContain(`killed ${report.before[0]}`)
    expect(report.after).toHaveLength(1)
    expect(report.after[0]).not.toBe(report.before[0])
  } else {
    expect(report.killed).toBe('')
    expect(report.after).toEqual(report.before)
  }
}

/** SIGKILL each of `pids` that is still there (cleanup after a failed test). */
export function killLater(pids: number[]): void {
  for (const p of pids) {
    try {
      process.kill(p, 'SIGKILL')
    } catch {
      // gone
    }
  }
}

/** Poll `check` until it returns a non-undefined value, or throw after `ms` (generous: the machine is shared). */
export async function eventually<T>(check: () => T | undefined | Promise<T | undefined>, ms = 60_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await check()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(25)
  }
}

const made: Array<{ rt: ShellRuntime; dirs: string[] }> = []

/** A temporary directory (real path) under `base`, removed after the test. */
export function tempDir(label = 'root', base = tmpdir()): string {
  const dir = realpathSync(mkdtempSync(join(base, `hands-test-${label}-`)))
  extraDirs.push(dir)
  return dir
}
const extraDirs: string[] = []

/** A runtime over a fresh temporary root; closed after the test, which then proves no job process survives. */
export function makeRuntime(options: Partial<ShellRuntimeOptions> = {}): { rt: ShellRuntime; root: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'hands-test-root-')))
  let rt: ShellRuntime
  try {
    rt = createShellRuntime({ roots: [root], stopGraceMs: 500, ...options })
  } catch (e) {
    rmSync(root, { recursive: true, force: true })
    throw e
  }
  made.push({ rt, dirs: [root] })
  return { rt, root }
}

afterEach(async () => {
  const all = made.splice(0)
  await Promise.all(all.map(({ rt }) => rt.close()))
  for (const { dirs } of all) for (const d of dirs) rmSync(d, { recursive: true, force: true })
  for (const d of extraDirs.splice(0)) rmSync(d, { recursive: true, force: true })
  // Nothing of any tree may outlive its runtime.
  const left = await eventually(
    () => {
      const pids = jobProcesses()
      return pids.length === 0 ? pids : undefined
    },
    10_000,
    'every job process to end',
  ).catch(() => jobProcesses())
  if (left.length > 0) {
    for (const p of left) {
      try {
        process.kill(p, 'SIGKILL')
      } catch {
        // gone
      }
    }
    throw new Error(`processes outlived their runtime: ${left.join(', ')}`)
  }
})

/** Wait until a background shell's logs satisfy `pred`; returns those lines. */
export async function logsUntil(rt: ShellRuntime, id: string, pred: (lines: string[]) => boolean, ms = 20_000): Promise<string[]> {
  return eventually(
    async () => {
      const { lines } = await rt.shell_logs({ id, n: 2000 })
      return pred(lines) ? lines : undefined
    },
    ms,
    `logs of ${id}`,
  )
}

/** `value`, after checking it against the contract's result schema (throws naming the issues). */
export function valid<T>(contract: Parameters<typeof checkResult>[0], value: T): T {
  const outcome = checkResult(contract, value)
  if (!outcome.ok) throw new Error(`result breaks the contract: ${JSON.stringify(outcome.issues)}`)
  return value
}

/** The ToolError a promise rejects with (fails when it resolves or rejects with anything else). */
export async function rejection(p: Promise<unknown>): Promise<ToolError> {
  try {
    await p
  } catch (err) {
    if (err instanceof ToolError) return err
    throw err
  }
  throw new Error('expected a ToolError')
}

/** The confinement mechanisms that work on this machine, strongest-first as `auto` prefers them. */
export const MECHANISMS = (['landlock', 'bwrap'] as const).filter((m) => {
  try {
    return describeConfinement({ roots: ['/'], confine: m }).kind === m
  } catch {
    return false
  }
})

/**
 * Check `check` on 3,000 chunks of bytes drawn from `byte`, up to `maxLength` long, each starting
 * at an offset of up to `maxOffset` into its buffer (so word-at-a-time scans meet every alignment).
 */
export function everyChunk(byte: fc.Arbitrary<number>, maxLength: number, maxOffset: number, check: (chunk: Buffer) => void): void {
  fc.assert(
    fc.property(fc.array(byte, { maxLength }), fc.integer({ min: 0, max: maxOffset }), (bytes, offset) => {
      const pool = Buffer.alloc(offset + bytes.length)
      pool.set(bytes, offset)
      check(pool.subarray(offset))
    }),
    { numRuns: 3000 },
  )
}

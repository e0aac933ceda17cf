import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import type { ConfineMode } from '../src/index.ts'
import { findWritableCgroup } from '../../sandbox/src/tree/find-cgroup.ts'
import { registerWithReaper } from '../../sandbox/src/tree/reaper.ts'
import { alive, eventually, expectReaperAttempt, hostArgv, jobProcesses, killLater, makeRuntime, MECHANISMS, processesWhere, tempDir } from './helpers.ts'

const cgroup = findWritableCgroup()
const everyMode: ConfineMode[] = [...MECHANISMS, 'off']

/** Live reapers of host `pid` (their last arguments are `hands-reaper hands-<pid>`). */
const reapersOf = (pid: number): number[] => processesWhere((cmd) => cmd.endsWith(`\0hands-reaper\0hands-${pid}\0`))

interface Report {
  pids: number[]
  dirs: string[]
  closed: { spool: string; tmp: string } | null
  before: number[]
  after: number[]
  killed: string
  keepersBefore: number[]
  keepersAfter: number[]
}

/** Run the three-session host in `scenario`, SIGKILL it once it reported, and return its report. */
async function killedHost(confine: ConfineMode, scenario: string): Promise<{ report: Report; hostPid: number }> {
  const root = tempDir('reaper')
  const [node, ...args] = hostArgv('host-sessions', [confine, root, scenario])
  const host = spawn(node, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  try {
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the host did not report')), 40_000)
      createInterface({ input: host.stdout }).once('line', (l) => {
        clearTimeout(timer)
        resolve(l)
      })
      host.once('exit', (code) => reject(new Error(`host exited early (${code})`)))
    })
    return { report: JSON.parse(line) as Report, hostPid: host.pid as number }
  } finally {
    host.kill('SIGKILL')
  }
}

/** Everything the dead host's sessions held is gone: processes, job trees, keepers, reapers, directories, cgroups. */
async function expectNothingLeft(report: Report, hostPid: number): Promise<void> {
  const all = [...report.pids, ...report.keepersBefore, ...report.keepersAfter, ...report.before, ...report.after]
  try {
    await eventually(() => (all.every((p) => !alive(p)) ? true : undefined), 30_000, 'every pid of the dead host to end')
    await eventually(() => (jobProcesses(`hands-${hostPid}-`).length === 0 ? true : undefined), 30_000, 'the job trees to be empty')
    await eventually(() => (report.dirs.some((d) => existsSync(d)) ? undefined : true), 30_000, 'every spool and TMPDIR to be removed')
    expect(reapersOf(hostPid)).toEqual([])
    if (cgroup !== null) expect(readdirSync(cgroup.dir).filter((n) => n.startsWith(`hands-${hostPid}-`))).toEqual([])
  } finally {
    killLater(report.pids.filter(alive))
  }
}

describe('the reaper: one per host, shared by every session', () => {
  it('starts with the first session, serves every session that opens while one is open, and ends with the last close', async () => {
    expect(reapersOf(process.pid)).toEqual([])
    const a = makeRuntime().rt
    const [reaper] = await eventually(() => (reapersOf(process.pid).length === 1 ? reapersOf(process.pid) : undefined), 10_000, 'the reaper')
    const b = makeRuntime().rt
    await Promise.all([a.shell_run({ commands: ['true'] }), b.shell_run({ commands: ['true'] })])
    expect(reapersOf(process.pid)).toEqual([reaper])
    await a.close()
    expect(reapersOf(process.pid)).toEqual([reaper])
    await b.close()
    await eventually(() => (reapersOf(process.pid).length === 0 ? true : undefined), 10_000, 'the reaper to end')
  })

  for (const confine of everyMode) {
    it(`(${confine}) SIGKILL of a host with three sessions open leaves nothing of any of them behind`, async () => {
      const { report, hostPid } = await killedHost(confine, 'plain')
      expect(report.before).toHaveLength(1)
      expect(report.dirs).toHaveLength(6)
      if (confine === 'landlock') expect(report.keepersBefore).toHaveLength(3)
      await expectNothingLeft(report, hostPid)
    }, 120_000)
  }

  for (const confine of everyMode) {
    it(`(${confine}) a command that tries to kill the shared reaper, then SIGKILL of the host, leaves nothing of any session behind`, async () => {
      const { report, hostPid } = await killedHost(confine, 'kill-reaper')
      expectReaperAttempt(confine, report)
      await expectNothingLeft(report, hostPid)
    }, 120_000)
  }

  for (const confine of everyMode) {
    it(`(${confine}) a reaper killed from outside is started again with every session (and their ruleset keepers), and a host SIGKILL then leaves nothing behind`, async () => {
      const { report, hostPid } = await killedHost(confine, 'reaper-dies')
      expect(report.after).toHaveLength(1)
      expect(report.after[0]).not.toBe(report.before[0])
      if (confine === 'landlock') {
        expect(report.keepersBefore).toHaveLength(3)
        expect(report.keepersAfter.filter((p) => !report.keepersBefore.includes(p))).toHaveLength(3)
        // The old keepers ended with the reaper that held their stdin.
        expect(report.keepersBefore.filter(alive)).toEqual([])
      }
      await expectNothingLeft(report, hostPid)
    }, 120_000)
  }

  it('a closed session is unregistered: a later host death leaves what now stands at its paths alone', async () => {
    const { report, hostPid } = await killedHost('auto', 'close-first')
    const closed = report.closed as { spool: string; tmp: string }
    try {
      expect(report.dirs).toHaveLength(4)
      await expectNothingLeft(report, hostPid)
      for (const dir of [closed.spool, closed.tmp]) expect(readFileSync(join(dir, 'not-hands'), 'utf8')).toBe('someone else owns this now')
    } finally {
      for (const dir of [closed.spool, closed.tmp]) rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  it('removes what a closed session could not, once its kept process has exited, and nothing else', async () => {
    const left = tempDir('left')
    const kept = tempDir('kept')
    writeFileSync(join(left, 'file'), 'x')
    mkdirSync(join(left, 'sub'))
    // The kept process writes into `left` after its stdin ends, the way a ruleset keeper that is
    // rebuilding writes its stamp: the removal must come after it.
    const script = `cat > /dev/null; sleep 0.2; mkdir -p ${left}/late`
    const reg = registerWithReaper('bash', `hands-${process.pid}-left`, { target: '', marker: '', dirs: [left, kept], cgroups: [] })
    reg.keep({ file: '/bin/sh', args: ['-c', script], argsFile: join(kept, 'keeper.args') })
    await eventually(() => (processesWhere((cmd) => cmd.includes(`${left}/late`)).length > 0 ? true : undefined), 20_000, 'the kept process')
    reg.release([left])
    await eventually(() => (existsSync(left) ? undefined : true), 20_000, `${left} to be removed`)
    await sleep(300)
    expect(existsSync(left)).toBe(false)
    expect(existsSync(kept)).toBe(true)
  })
})

import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { packageDir } from '../../sandbox/src/confine/probe.ts'
import { findWritableCgroup } from '../../sandbox/src/tree/find-cgroup.ts'
import { eventually, FIXTURES, tempDir } from './helpers.ts'

const HELPER = join(packageDir(), 'native', 'bin', `${process.platform}-${process.arch}`, 'hands-confine')
const RUN = join(FIXTURES, 'run-helper.py')
const cgroup = findWritableCgroup()
const hasPython = spawnSync('python3', ['-c', ''], { stdio: 'ignore' }).status === 0

const made: string[] = []
let seq = 0

/** A fresh cgroup under ours, named like a session's so a leak shows in the other tests' checks; its cgroup.procs. */
function makeCgroup(): { dir: string; procs: string } {
  const dir = join(cgroup?.dir ?? '', `hands-${process.pid}-relay-${++seq}`)
  mkdirSync(dir)
  made.push(dir)
  return { dir, procs: join(dir, 'cgroup.procs') }
}

afterEach(async () => {
  for (const dir of made.splice(0)) {
    if (existsSync(join(dir, 'cgroup.kill'))) writeFileSync(join(dir, 'cgroup.kill'), '1')
    await eventually(() => (readFileSync(join(dir, 'cgroup.procs'), 'latin1').trim() === '' ? true : undefined), 10_000, `${dir} to empty`)
    rmdirSync(dir)
  }
})

function runHelper(args: string[]): { out: Record<string, unknown>; stderr: string } {
  const r = spawnSync('python3', [RUN, ...args], { encoding: 'utf8', timeout: 120_000 })
  expect(r.status, r.stderr).toBe(0)
  return { out: JSON.parse(r.stdout) as Record<string, unknown>, stderr: r.stderr }
}

/** Run the helper under `how` (a run-helper.py mode and its argument) with a job that prints its cgroup: it must be the one the helper was given. */
function expectJobInItsCgroup(how: string[]) {
  const { dir, procs } = makeCgroup()
  const r = spawnSync('python3', [RUN, ...how, HELPER, '--cgroup', procs, '--', '/bin/cat', '/proc/self/cgroup'], { encoding: 'utf8', timeout: 120_000 })
  expect(r.stderr).toBe('')
  expect(r.status).toBe(0)
  const unified = r.stdout.split('\n').find((l) => l.startsWith('0::'))
  expect(join(cgroup?.mount ?? '', unified?.slice(3) ?? '')).toBe(dir)
}

describe.skipIf(cgroup === null || !existsSync(HELPER) || !hasPython)('hands-confine --cgroup', () => {
  it.each([
    ['E2BIG', 7],
    ['EPERM', 1],
    ['ENOSYS', 38],
  ])('starts the job in its cgroup by writing cgroup.procs when clone3 fails with %s', (_, errno) => {
    expectJobInItsCgroup(['deny-clone3', String(errno)])
  })

  it('starts the job in its cgroup when the relay cannot get a signalfd, instead of killing a job that already ran', () => {
    // 0-2 and the cgroup directory: no descriptor is left for the signalfd.
    expectJobInItsCgroup(['nofile', '4'])
  })

  it('passes a hangup of its terminal (sent by the kernel to the session leader, the relay) on to the job', () => {
    const { procs } = makeCgroup()
    const file = join(tempDir('hangup'), 'hup')
    const script = `trap 'echo hup >> ${file}; exit 3' HUP; echo ready; while :; do sleep 0.05; done`
    const { out } = runHelper(['hangup', HELPER, '--cgroup', procs, '--', '/bin/bash', '-c', script])
    expect(out).toEqual({ ready: true, exit: 3 })
    expect(readFileSync(file, 'utf8')).toBe('hup\n')
  })

  it('dies by the signal that killed the job, without dumping a core of its own', () => {
    const { procs } = makeCgroup()
    const cwd = tempDir('core')
    const r = spawnSync('python3', [RUN, 'core', HELPER, '--cgroup', procs, '--', '/bin/sh', '-c', 'kill -QUIT $$'], {
      cwd,
      encoding: 'utf8',
      timeout: 120_000,
    })
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({ signal: 3, core: false })
  })
})

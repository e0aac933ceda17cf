/**
 * A job under memory or process-count pressure: the OOM killer takes the job, never the server,
 * and a session whose commands were stopped works again at once (every process the tree left is
 * reaped, none stays a zombie that counts against a limit). The host runs in a cgroup v1 memory or
 * pids hierarchy (root only; skipped where none is writable).
 */
import { spawn } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { JOB_PROCESS_BOUND } from '../../sandbox/src/tree/bound.ts'
import { eventually, hostArgv, hostPackageEntry, makeRuntime, tempDir } from './helpers.ts'

/** A fresh child of this process's cgroup in the v1 hierarchy of `controller`, or null. */
function v1Cgroup(controller: string): string | null {
  const line = readFileSync('/proc/self/cgroup', 'latin1')
    .split('\n')
    .find((l) => l.split(':')[1]?.split(',').includes(controller))
  const mount = `/sys/fs/cgroup/${controller}`
  if (line === undefined || !existsSync(join(mount, 'cgroup.procs'))) return null
  const dir = join(mount, line.slice(line.indexOf(':', line.indexOf(':') + 1) + 1), `hands-pressure-${process.pid}-${Date.now()}`)
  try {
    mkdirSync(dir)
    return dir
  } catch {
    return null
  }
}

const made: string[] = []
afterEach(async () => {
  for (const dir of made.splice(0)) {
    await eventually(() => (readFileSync(join(dir, 'cgroup.procs'), 'latin1').trim() === '' ? true : undefined), 20_000, `${dir} to empty`)
    rmdirSync(dir)
  }
})

interface Outcome {
  code: number | null
  report: { first: { exit: number | null; note: string | null }; after: Array<{ stdout: string; exit: number | null }> } | null
  stderr: string
}

/** Run the pressure host inside `cgroup` (it joins before node starts). */
function hostIn(cgroup: string, scenario: 'oom' | 'bomb'): Promise<Outcome> {
  const root = tempDir(scenario)
  const node = hostArgv('pressure-host', [scenario, root])
  // HOME without a profile: the OOM killer or the bound must not stop a login shell midway through
  // someone's profile (pyenv's rehash, say, leaves a lock that stalls every later login shell).
  const child = spawn('bash', ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup, ...node], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HOME: root },
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (d: Buffer) => (out += d))
  child.stderr.on('data', (d: Buffer) => (err += d))
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000)
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, report: code === 0 ? (JSON.parse(out) as Outcome['report']) : null, stderr: err })
    })
  })
}

/** Zombies in a v1 cgroup: processes that ended and nobody reaped, still counted against its limits. */
function zombies(cgroup: string): number[] {
  const pids = readFileSync(join(cgroup, 'cgroup.procs'), 'latin1').split('\n').filter(Boolean).map(Number)
  return pids.filter((p) => {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'latin1')
      return stat[stat.lastIndexOf(')') + 2] === 'Z'
    } catch {
      return false
    }
  })
}

const memory = process.getuid?.() === 0 ? v1Cgroup('memory') : null
const pids = process.getuid?.() === 0 ? v1Cgroup('pids') : null
for (const dir of [memory, pids]) if (dir !== null) rmdirSync(dir)

describe('jobs under pressure', () => {
  it.skipIf(memory === null)(
    'under a memory limit the OOM killer takes the job, never the server, and the session works on',
    async () => {
      const cgroup = v1Cgroup('memory') as string
      made.push(cgroup)
      writeFileSync(join(cgroup, 'memory.limit_in_bytes'), String(600 * 1024 * 1024))
      const r = await hostIn(cgroup, 'oom')
      expect(r.code, r.stderr).toBe(0)
      expect(readFileSync(join(cgroup, 'memory.oom_control'), 'latin1')).toMatch(/oom_kill [1-9]/)
      expect(r.report?.after.map((a) => a.stdout)).toEqual(['after 0\n', 'after 1\n', 'after 2\n'])
    },
    180_000,
  )

  it.skipIf(pids === null)(
    'after a fork bomb within a process limit, the session works again at once and leaves no zombie',
    async () => {
      const cgroup = v1Cgroup('pids') as string
      made.push(cgroup)
      writeFileSync(join(cgroup, 'pids.max'), '300')
      const r = await hostIn(cgroup, 'bomb')
      expect(r.code, r.stderr).toBe(0)
      expect(r.report?.first.exit).toBe(null)
      expect(r.report?.after.map((a) => a.stdout)).toEqual(['after 0\n', 'after 1\n', 'after 2\n'])
      expect(zombies(cgroup)).toEqual([])
    },
    180_000,
  )
})

/** Processes of `uid` now (a cheap count: the owner of each /proc/PID). */
function processesOf(uid: number): number {
  let n = 0
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (statSync(`/proc/${name}`).uid === uid) n++
    } catch {
      // gone
    }
  }
  return n
}

/** The machine's tasks (processes and threads) now, as the helper reads them to bound a job. */
const machineTasks = () => Number(/ \d+\/(\d+) /.exec(readFileSync('/proc/loadavg', 'latin1'))?.[1])

describe.skipIf(process.getuid?.() !== 0)('a fork bomb with no cgroup for its tree', () => {
  it('as an ordinary user stops at the per-job bound, is stopped with its line, and the next command runs at once', async () => {
    const NOBODY = 65534
    const root = tempDir('loose-bomb')
    chownSync(root, NOBODY, NOBODY)
    // A fail-safe far above hands' bound, so a broken bound shows as a peak past it instead of a wedged machine.
    const failSafe = machineTasks() + JOB_PROCESS_BOUND * 4
    const argv = [
      'prlimit',
      `--nproc=${failSafe}`,
      '--',
      'setpriv',
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      '--clear-groups',
      '--',
      ...hostArgv('pressure-host', ['loose-bomb', root]),
    ]
    const baseline = processesOf(NOBODY)
    const tasksAtStart = machineTasks()
    let peak = 0
    const sampler = setInterval(() => {
      peak = Math.max(peak, processesOf(NOBODY) - baseline)
    }, 250)
    const [file, ...args] = argv as [string, ...string[]]
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOME: root } })
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => (out += d))
    child.stderr.on('data', (d: Buffer) => (err += d))
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 240_000)
      child.once('close', (c) => {
        clearTimeout(timer)
        resolve(c)
      })
    })
    clearInterval(sampler)
    expect(code, err).toBe(0)
    const report = JSON.parse(out) as {
      first: { exit: number | null; duration_ms: number }
      after: Array<{ stdout: string; duration_ms: number }>
      summary: string
    }
    expect(report.summary).toContain(`each job may start at most ${JOB_PROCESS_BOUND} processes and threads beyond those running`)
    // The line ends after its sleep and what it left running is stopped within the bound on a run.
    expect(report.first.duration_ms).toBeLessThan(60_000)
    expect(report.after.map((a) => a.stdout)).toEqual(['after 0\n', 'after 1\n', 'after 2\n'])
    for (const a of report.after) expect(a.duration_ms).toBeLessThan(10_000)
    // The bomb stopped at the bound: the user's processes never passed the machine's tasks plus the bound.
    expect(peak).toBeGreaterThan(50)
    expect(peak).toBeLessThanOrEqual(tasksAtStart + JOB_PROCESS_BOUND + 100)
    await eventually(() => (processesOf(NOBODY) <= baseline ? true : undefined), 60_000, 'the bomb to be gone')
  }, 300_000)
})

describe('host limits on a session', () => {
  it.skipIf(memory === null || pids === null)(
    "hold all of a session's commands together to the memory and process limits the host gives, and go with the session",
    async () => {
      const { rt } = makeRuntime({ memoryLimit: 200 * 1024 * 1024, processLimit: 60 })
      expect(rt.confinement.summary).toContain("limits: memory 200 MiB, 60 processes for all of the session's commands together")
      const r = await rt.shell_run({
        commands: [
          'python3 -c "b = bytearray(400 * 1024 * 1024); print(\'allocated\')"',
          // Forks until the kernel says no (or 100 children), then says how many it got.
          "python3 - <<'EOF'\nimport os, time\nn = 0\nwhile n < 100:\n  try:\n    pid = os.fork()\n  except OSError:\n    break\n  if pid == 0:\n    time.sleep(5)\n    os._exit(0)\n  n += 1\nprint('started', n)\nEOF",
          'echo still works',
        ],
      })
      expect(r.commands[0]?.exit).toBe(137)
      expect(r.commands[0]?.stdout).toBe('')
      const started = Number(/started (\d+)/.exec(r.commands[1]?.stdout ?? '')?.[1])
      expect(started).toBeGreaterThan(0)
      expect(started).toBeLessThan(60)
      expect(r.commands[2]?.stdout).toBe('still works\n')
      const groups = readFileSync('/proc/self/cgroup', 'latin1')
      expect(groups).not.toContain('hands-')
      await rt.close()
      for (const controller of ['memory', 'pids']) {
        const line = groups.split('\n').find((l) => l.split(':')[1] === controller) as string
        const own = join(`/sys/fs/cgroup/${controller}`, line.slice(line.indexOf(':', line.indexOf(':') + 1) + 1))
        expect(readdirSync(own).filter((f) => f.startsWith(`hands-${process.pid}-`))).toEqual([])
      }
    },
    120_000,
  )

  it('refuse to start, naming what they need, where no cgroup can hold them', async () => {
    const script = `import('${hostPackageEntry()}').then((m) => { try { m.createShellRuntime({ roots: ['/tmp'], memoryLimit: 1 << 30 }); console.log('started') } catch (e) { console.log(e.message) } })`
    const prefix: string[] = process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--'] : []
    const command = [...prefix, process.execPath, '--input-type=module', '-e', script]
    const [file, ...args] = command as [string, ...string[]]
    const out = await new Promise<string>((resolve) => {
      const c = spawn(file, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, HOME: '/tmp' } })
      let text = ''
      c.stdout.on('data', (d: Buffer) => (text += d))
      c.once('close', () => resolve(text))
    })
    if (process.getuid?.() !== 0 && out.trim() === 'started') return // this user's cgroups can hold them
    expect(out).toMatch(
      /memoryLimit: no cgroup can hold it here\. hands needs cgroup v2 with the memory controller delegated to its cgroup .*, or a writable cgroup v1 memory hierarchy/,
    )
  }, 120_000)
})

import { spawn } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { describe, expect, it } from 'vitest'
import { findWritableCgroup } from '../../sandbox/src/tree/find-cgroup.ts'
import { alive, eventually, FIXTURES, hostArgv, jobProcesses, logsUntil, makeRuntime, tempDir } from './helpers.ts'

const hasCgroup = findWritableCgroup() !== null
const modes = hasCgroup ? (['cgroup', 'marker'] as const) : (['marker'] as const)

/** Start a host process with a runtime holding a background tree and a hanging shell_run; resolve its pids. */
async function startHost(tree: string, how: 'wait' | 'exit') {
  const root = tempDir('host')
  const [node, ...args] = hostArgv('host', [tree, how, root, FIXTURES])
  const child = spawn(node, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout })
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error('the host did not report its pids'))
    }, 120_000)
    rl.once('line', (l) => {
      clearTimeout(timer)
      resolve(l)
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`host exited early (${code})`))
    })
  })
  const { pids, spool } = JSON.parse(line) as { pids: number[]; spool: string }
  return { child, pids, spool, prefix: `hands-${child.pid}-` }
}

describe('process trees', () => {
  it('uses a per-job cgroup v2 where a writable one exists', () => {
    const { rt } = makeRuntime()
    expect(rt.treeKind).toBe(hasCgroup ? 'cgroup' : 'marker')
  })

  it('with the environment marker, shell_stop still kills a setsid grandchild and the whole fixture tree', async () => {
    const { rt } = makeRuntime({ tree: 'marker', stopGraceMs: 300 })
    expect(rt.treeKind).toBe('marker')
    const b = await rt.shell_background({ commands: [`bash ${FIXTURES}/tree.sh`] })
    const lines = await logsUntil(rt, b.id, (l) => l.includes('tree ready'))
    const pids = lines.filter((l) => l.startsWith('pid ')).map((l) => Number(l.slice(4)))
    expect(pids.length).toBeGreaterThanOrEqual(5)
    await rt.shell_stop({ id: b.id })
    for (const p of [b.pid, ...pids]) expect(alive(p)).toBe(false)
  })

  it('with the environment marker, shell_run kills what a command left behind, every time (40 runs)', async () => {
    // The leftover is often caught right after its exec, when /proc reads its environment as empty.
    const { rt } = makeRuntime({ tree: 'marker' })
    for (let i = 0; i < 40; i++) {
      const r = await rt.shell_run({ commands: ['setsid sleep 1000 & echo $!'] })
      expect(r.commands[0]?.note).toContain('shell_background')
      const pid = Number(r.commands[0]?.stdout.trim())
      // Killed is enough: the process may still be inside its exit (pipes closed, not yet a zombie).
      await eventually(() => (alive(pid) ? undefined : true), 3000, `run ${i}: pid ${pid} to be gone`)
    }
  })

  it('with the environment marker, shell_run kills a leftover that keeps exec-ing itself (40 runs)', async () => {
    // Each exec opens the moment in which /proc reads the environment as empty; a scan that lands
    // there must look again rather than report the tree empty.
    const { rt } = makeRuntime({ tree: 'marker' })
    const again = join(tempDir('reexec'), 'again.sh')
    writeFileSync(again, `exec /bin/bash ${again}\n`)
    for (let i = 0; i < 40; i++) {
      const r = await rt.shell_run({ commands: [`setsid /bin/bash ${again} & echo $!`] })
      const pid = Number(r.commands[0]?.stdout.trim())
      // SIGTERM lands when the exec it interrupted completes, and exiting takes a moment.
      await eventually(() => (alive(pid) ? undefined : true), 3000, `run ${i}: pid ${pid} to be gone`)
    }
  })

  it('with the environment marker, a child that cleared its environment is still found through its parent', async () => {
    const { rt } = makeRuntime({ tree: 'marker' })
    const b = await rt.shell_background({ commands: ['env -i /bin/sleep 1000 & echo "pid $!"; wait'] })
    const lines = await logsUntil(rt, b.id, (l) => l.some((x) => x.startsWith('pid ')))
    const pid = Number(lines.find((l) => l.startsWith('pid '))?.slice(4))
    await eventually(() => (alive(pid) ? true : undefined))
    await rt.shell_stop({ id: b.id })
    expect(alive(pid)).toBe(false)
  })

  for (const tree of modes) {
    for (const signal of ['SIGKILL', 'SIGTERM', 'SIGINT'] as const) {
      it(`(${tree}) a host killed with ${signal} leaves none of its shells alive`, async () => {
        const host = await startHost(tree, 'wait')
        try {
          expect(host.pids.length).toBeGreaterThanOrEqual(7)
          for (const p of host.pids) expect(alive(p)).toBe(true)
        } finally {
          host.child.kill(signal)
        }
        await eventually(() => (host.pids.every((p) => !alive(p)) ? true : undefined), 30_000, 'every pid of the dead host to end')
        await eventually(() => (jobProcesses(host.prefix).length === 0 ? true : undefined), 30_000, 'the job trees to be empty')
        await eventually(() => (existsSync(host.spool) ? undefined : true), 30_000, 'the spool directory to be removed')
      }, 120_000)
    }

    it(`(${tree}) a host that exits normally stops every shell before it is gone`, async () => {
      const host = await startHost(tree, 'exit')
      await new Promise((r) => host.child.once('exit', r))
      await eventually(() => (host.pids.every((p) => !alive(p)) ? true : undefined), 30_000, 'every pid of the exited host to end')
      expect(jobProcesses(host.prefix)).toEqual([])
    }, 120_000)
  }
})

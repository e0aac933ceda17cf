import { existsSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import type { ConfineMode } from '../src/index.ts'
import { Spawner } from '../../sandbox/src/process/spawner.ts'
import { alive, eventually, makeRuntime, MECHANISMS, processesWhere } from './helpers.ts'

/** Modes whose commands share our pid namespace (bubblewrap gives each its own), so a pid they print means something here. */
const SAME_PIDS: ConfineMode[] = ['off', ...MECHANISMS.filter((m) => m === 'landlock')]

/** A command that prints the parent of its parent: the parent of the helper's relay, which started the job. */
const STARTER = 'cut -d" " -f4 /proc/$PPID/stat'

/** This process's children that run the helper's spawner. */
function spawnersOfOurs(): number[] {
  return processesWhere((cmd) => cmd.includes('\0--spawner\0')).filter((pid) => {
    try {
      return stat(pid).ppid === process.pid
    } catch {
      return false
    }
  })
}

function stat(pid: number): { comm: string; ppid: number } {
  const text = readFileSync(`/proc/${pid}/stat`, 'latin1')
  return { comm: text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')), ppid: Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]) }
}

/** The pid that started the job running `command` (its relay's parent), from the job's own account. */
async function starterOf(run: Promise<{ commands: Array<{ stdout: string; exit: number | null }> }>): Promise<number> {
  const r = await run
  expect(r.commands[0]?.exit).toBe(0)
  return Number(r.commands[0]?.stdout.trim())
}

describe('the spawner', () => {
  for (const confine of SAME_PIDS) {
    it(`(${confine}) starts every piped job, so the server does not fork for it; without it the server does`, async () => {
      const { rt } = makeRuntime({ confine })
      const first = await starterOf(rt.shell_run({ commands: [STARTER] }))
      expect(first).not.toBe(process.pid)
      expect(stat(first)).toEqual({ comm: 'hands-confine', ppid: process.pid })
      expect(readFileSync(`/proc/${first}/cmdline`, 'latin1').split('\0')).toContain('--spawner')
      // One spawner per session, for every job.
      expect(await starterOf(rt.shell_run({ commands: [STARTER] }))).toBe(first)
      // Nothing of the server's environment is in it (Node gives its IPC channel's variables only).
      const env = readFileSync(`/proc/${first}/environ`, 'latin1')
        .split('\0')
        .filter((e) => e !== '')
      expect(env.every((e) => e.startsWith('NODE_CHANNEL_'))).toBe(true)
      await rt.close()
      await eventually(() => !alive(first) || undefined, 5000, 'the spawner to end with its session')

      const { rt: plain } = makeRuntime({ confine, spawner: false })
      expect(await starterOf(plain.shell_run({ commands: [STARTER] }))).toBe(process.pid)
    })
  }

  it('falls back to Node spawn when the spawner is killed, also for a command in flight', async () => {
    const { rt } = makeRuntime({ confine: SAME_PIDS.at(-1) as ConfineMode })
    const spawner = await starterOf(rt.shell_run({ commands: [STARTER] }))
    expect(spawner).not.toBe(process.pid)
    const inFlight = rt.shell_run({ commands: [`${STARTER}; sleep 1; echo done; exit 7`] })
    await sleep(400)
    process.kill(spawner, 'SIGKILL')
    const r = await inFlight
    expect(r.commands[0]?.stdout).toBe(`${spawner}\ndone\n`)
    expect(r.commands[0]?.exit).toBe(7)
    await eventually(() => !alive(spawner) || undefined, 5000, 'the spawner to be gone')
    // Later commands start as they did before the spawner: from the server.
    const later = await rt.shell_run({ commands: [STARTER, 'echo after'] })
    expect(Number(later.commands[0]?.stdout.trim())).toBe(process.pid)
    expect(later.commands[1]?.stdout).toBe('after\n')
  })

  it('is one per process, shared by every session, and ends with the last session that holds it', async () => {
    const confine = SAME_PIDS.at(-1) as ConfineMode
    const { rt: a } = makeRuntime({ confine })
    const { rt: b } = makeRuntime({ confine })
    const spawner = await starterOf(a.shell_run({ commands: [STARTER] }))
    expect(spawner).not.toBe(process.pid)
    expect(await starterOf(b.shell_run({ commands: [STARTER] }))).toBe(spawner)
    // It runs the helper as installed, not a session's copy (which goes with its session).
    expect(readFileSync(`/proc/${spawner}/cmdline`, 'latin1')).not.toContain(a.spoolDir)
    await a.close()
    expect(alive(spawner)).toBe(true)
    expect(await starterOf(b.shell_run({ commands: [STARTER] }))).toBe(spawner)
    await b.close()
    await eventually(() => !alive(spawner) || undefined, 5000, 'the spawner to end with the last session')
    // A session made later starts a new one.
    const { rt: c } = makeRuntime({ confine })
    const next = await starterOf(c.shell_run({ commands: [STARTER] }))
    expect(next).not.toBe(spawner)
    expect(stat(next)).toEqual({ comm: 'hands-confine', ppid: process.pid })
  })

  it('starts with prepare(), before the first command, which it then starts', async () => {
    const confine = SAME_PIDS.at(-1) as ConfineMode
    const { rt } = makeRuntime({ confine })
    await eventually(() => (spawnersOfOurs().length === 0 ? true : undefined), 5000, 'no spawner of an earlier test to be left')
    rt.prepare()
    const [spawner] = await eventually(() => (spawnersOfOurs().length === 1 ? spawnersOfOurs() : undefined), 5000, 'the spawner to start')
    expect(await starterOf(rt.shell_run({ commands: [STARTER] }))).toBe(spawner)
  })

  it('leaves no process and no folder when its session closes while prepare() is still starting it', async () => {
    for (const confine of SAME_PIDS) {
      for (let i = 0; i < 5; i++) {
        const { rt } = makeRuntime({ confine })
        rt.prepare()
        await rt.close()
        expect(existsSync(rt.spoolDir)).toBe(false)
        expect(existsSync(rt.tmpDir)).toBe(false)
      }
      await eventually(() => (spawnersOfOurs().length === 0 ? true : undefined), 5000, 'no spawner to be left')
    }
  })

  it('answers null (the caller spawns) when its helper is missing or is not a spawner', async () => {
    const launch = { file: '/bin/echo', args: ['x'], cwd: '/', env: {}, statusFd: 4, hasRelay: true }
    for (const helper of ['/nonexistent/hands-confine', '/bin/true']) {
      const s = new Spawner(helper)
      expect(await s.start(launch, {}, ['ignore', 'pipe', 'pipe'])).toBeNull()
      expect(s.isAlive).toBe(false)
      s.close()
    }
  })
})

import { execFileSync } from 'node:child_process'
import { chmodSync } from 'node:fs'
import { join } from 'node:path'
import { shellLogs, type ShellLogsResult } from '@hands/contracts'
import { describe, expect, it } from 'vitest'
import type { ShellRuntime, ShellRuntimeOptions } from '../src/index.ts'
import { eventually, FIXTURES, hostArgv, makeRuntime, MECHANISMS, tempDir, valid } from './helpers.ts'

/** shell_logs of `id` once `pred` holds (checked against the contract on every read). */
function logsWhen(rt: ShellRuntime, id: string, pred: (r: ShellLogsResult) => boolean, what: string): Promise<ShellLogsResult> {
  return eventually(
    async () => {
      const r = valid(shellLogs, await rt.shell_logs({ id, n: 50 }))
      return pred(r) ? r : undefined
    },
    30_000,
    what,
  )
}

/** Reads of `id` a while apart once it printed `ready`: none may say it waits for input. */
async function neverWaiting(rt: ShellRuntime, id: string): Promise<ShellLogsResult[]> {
  await logsWhen(rt, id, (r) => r.lines.includes('ready'), `${id} to be ready`)
  const reads: ShellLogsResult[] = []
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setTimeout(r, 150))
    reads.push(await rt.shell_logs({ id, n: 1 }))
  }
  return reads
}

/** A Python program that prints `ready`, then burns `seconds` of CPU time (not wall time) and prints `burnt`. */
const BURN = (seconds: number) =>
  `python3 -c "import time; print('ready', flush=True); t = time.process_time()\nwhile time.process_time() - t < ${seconds}: pass\nprint('burnt', flush=True)"`

const MODES: Array<[string, Partial<ShellRuntimeOptions>]> = [
  ['unconfined, cgroup', { confine: 'off', tree: 'auto' }],
  ['unconfined, marker', { confine: 'off', tree: 'marker' }],
  ...MECHANISMS.map((m): [string, Partial<ShellRuntimeOptions>] => [`${m}, cgroup`, { confine: m, tree: 'auto' }]),
  ...MECHANISMS.map((m): [string, Partial<ShellRuntimeOptions>] => [`${m}, marker`, { confine: m, tree: 'marker' }]),
]

describe.each(MODES)('shell_logs liveness (%s)', (_, options) => {
  it('says a shell blocked on a prompt waits for input, and no longer once it is answered', async () => {
    const { rt } = makeRuntime(options)
    await rt.shell_background({ id: 'ask', commands: ['read -p "name? " x; echo "hello $x"; sleep 1000'] })
    const asking = await logsWhen(rt, 'ask', (r) => r.is_waiting_for_input === true && r.lines.at(-1) === 'name? ', 'the prompt to wait')
    expect(asking.process_count).toBe(1)
    await rt.shell_type({ id: 'ask', text: 'ann' })
    // bash execs the script's last command: the sleep takes its place.
    const answered = await logsWhen(rt, 'ask', (r) => r.lines.includes('hello ann'), 'the answer')
    expect(answered.is_waiting_for_input).toBe(false)
    expect(answered.process_count).toBe(1)
  }, 240_000)

  it('counts the CPU time of processes that already exited, and every live process of the tree', async () => {
    const { rt } = makeRuntime(options)
    // Two children burn 0.4 s of CPU each and exit; then bash waits on two sleeps.
    await rt.shell_background({ id: 'work', commands: [`${BURN(0.4)}; ${BURN(0.4)}; sleep 1000 & sleep 1000 & echo started; wait`] })
    const r = await logsWhen(rt, 'work', (x) => x.lines.includes('started') && x.process_count === 3, 'bash and two sleeps')
    expect(r.cpu_ms).toBeGreaterThanOrEqual(800)
    // Generous: python's start-up and bash add a little; the machine is shared.
    expect(r.cpu_ms).toBeLessThan(60_000)
    expect(r.is_waiting_for_input).toBe(false)
  }, 240_000)
})

describe('shell_logs liveness', () => {
  it('tells a silent busy program from a silent sleeping one', async () => {
    const { rt } = makeRuntime()
    await rt.shell_background({ id: 'busy', commands: ['python3 -c "print(\'ready\', flush=True)\nwhile True: pass"'] })
    await rt.shell_background({ id: 'idle', commands: ['echo ready; sleep 1000'] })
    const busy = await neverWaiting(rt, 'busy')
    const idle = await neverWaiting(rt, 'idle')
    const [b0, b4] = [busy[0] as ShellLogsResult, busy[4] as ShellLogsResult]
    const [i0, i4] = [idle[0] as ShellLogsResult, idle[4] as ShellLogsResult]
    // Both silent, and more silent with time.
    expect(b4.silent_ms as number).toBeGreaterThan(b0.silent_ms as number)
    expect(i4.silent_ms as number).toBeGreaterThan(i0.silent_ms as number)
    expect(i4.silent_ms as number).toBeGreaterThanOrEqual(500)
    // Only the busy one uses CPU meanwhile (0.6 s of wall time, at least a fifth of it on a loaded machine).
    expect((b4.cpu_ms as number) - (b0.cpu_ms as number)).toBeGreaterThanOrEqual(100)
    expect((i4.cpu_ms as number) - (i0.cpu_ms as number)).toBeLessThan(50)
  }, 240_000)

  it('resets the silence when the shell prints', async () => {
    const { rt } = makeRuntime()
    await rt.shell_background({ id: 'tick', commands: ['while true; do echo tick; sleep 0.1; done'] })
    await logsWhen(rt, 'tick', (r) => r.lines.length >= 3, 'ticks')
    await new Promise((r) => setTimeout(r, 1500))
    const r = await rt.shell_logs({ id: 'tick', n: 1 })
    // A tick every 0.1 s: even a loaded machine prints within a second.
    expect(r.silent_ms).toBeLessThan(1000)
  }, 240_000)

  it('says which programs wait on their terminal: input(), getpass, vim, a REPL, a Node stdin reader, less', async () => {
    const { rt } = makeRuntime()
    const waiting: Record<string, string> = {
      pyinput: 'python3 -c "input(\'>>> \')"',
      getpass: 'python3 -c "import getpass; getpass.getpass()"',
      vim: 'vim --clean -n notes.txt',
      repl: 'python3 -i -c "pass"',
      node: 'node -e "process.stdin.on(\'data\', () => {})"',
      less: 'seq 1 300 > lines.txt; less lines.txt',
    }
    for (const [id, command] of Object.entries(waiting)) await rt.shell_background({ id, commands: [command] })
    for (const id of Object.keys(waiting)) {
      const r = await logsWhen(rt, id, (x) => x.is_waiting_for_input === true, `${id} to wait for input`)
      expect(r.status, id).toBe('running')
    }
  }, 240_000)

  it('says a program blocked on a socket, a server that also reads its terminal, and a sleep do not wait for input', async () => {
    const { rt } = makeRuntime()
    const busy: Record<string, string> = {
      socket: `python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); c = socket.create_connection(s.getsockname()); print('ready', flush=True); c.recv(10)"`,
      server: `node -e "require('http').createServer().listen(0, '127.0.0.1', () => console.log('ready')); process.stdin.on('data', () => {})"`,
      sleep: 'echo ready; sleep 1000',
    }
    for (const [id, command] of Object.entries(busy)) await rt.shell_background({ id, commands: [command] })
    for (const id of Object.keys(busy)) {
      for (const r of await neverWaiting(rt, id)) expect(r.is_waiting_for_input, id).toBe(false)
    }
  }, 240_000)

  it('reports an exited shell with null silence, CPU and input, and counts what it left running', async () => {
    const { rt } = makeRuntime({ confine: 'off' })
    await rt.shell_background({ id: 'gone', commands: ['setsid sleep 1000 > /dev/null 2>&1 < /dev/null & sleep 0.5; echo bye'] })
    const r = await logsWhen(rt, 'gone', (x) => x.status === 'exited', 'the shell to exit')
    expect(r).toMatchObject({ exit: 0, silent_ms: null, cpu_ms: null, process_count: 1, is_waiting_for_input: null })
    await rt.shell_stop({ id: 'gone' })
  }, 240_000)
})

/** `setpriv` to run a host as nobody, where this test runs as root and `su` exists to ask for a password. */
const canDropToNobody = (() => {
  if (process.getuid?.() !== 0) return false
  try {
    execFileSync('sh', ['-c', 'command -v setpriv && command -v su && command -v stty'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()

describe.runIf(canDropToNobody)('shell_logs liveness for a host that is not root', () => {
  it('says a set-user-ID password prompt it may not look into waits for input (the terminal has echo off)', () => {
    const root = tempDir('nobody')
    chmodSync(root, 0o777)
    const home = join(root, 'home')
    const out = execFileSync(
      'setpriv',
      [
        '--reuid=65534',
        '--regid=65534',
        '--clear-groups',
        'env',
        `HOME=${home}`,
        `TMPDIR=${root}`,
        ...hostArgv('prompt-host', [root, 'off', 'su root -c true', 'Password']),
      ],
      { encoding: 'utf8', timeout: 120_000, cwd: join(FIXTURES, '..', '..') },
    )
    const { logs, inspectable } = JSON.parse(out.trim().split('\n').at(-1) as string) as {
      logs: ShellLogsResult
      inspectable: Record<string, boolean>
    }
    expect(logs.lines.at(-1)).toContain('Password')
    // su runs as root: the host, as nobody, may not read what it is blocked on.
    expect(inspectable['su']).toBe(false)
    expect(logs).toMatchObject({ status: 'running', process_count: 1, is_waiting_for_input: true })
  }, 240_000)
})

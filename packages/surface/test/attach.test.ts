import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { IPty } from 'node-pty'
import { afterEach, describe, expect, it } from 'vitest'
import { handsArgv, installedHands } from './helpers/cli.ts'
import { connectStdio, REPO, structured } from './helpers/mcp.ts'

const ATTACK = join(import.meta.dirname, 'fixtures', 'attach-attack.py')
import { eventually, processesMentioning } from './helpers/procs.ts'
import { tempRoot } from './helpers/tmp.ts'

const require = createRequire(import.meta.url)
const pty = require('node-pty') as typeof import('node-pty')
const { Terminal } = require('@xterm/headless') as typeof import('@xterm/headless')

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

/** `hands attach ARGS` under a real 200x50 terminal, its output drawn by a headless xterm. */
function attachUnderPty(args: string[]) {
  const term = new Terminal({ cols: 200, rows: 50, allowProposedApi: true })
  const [command, ...argv] = handsArgv(['attach', ...args])
  const p: IPty = pty.spawn(command, argv, {
    name: 'xterm-256color',
    cols: 200,
    rows: 50,
    cwd: REPO,
    env: process.env as Record<string, string>,
  })
  let raw = ''
  let pending = 0
  p.onData((d) => {
    raw += d
    pending++
    term.write(d, () => pending--)
  })
  // Resolved once the terminal has also parsed everything written before the exit (xterm parses
  // writes later, in order: an empty write's callback comes after theirs), so rows() is complete.
  const exited = new Promise<number>((resolve) => p.onExit(({ exitCode }) => term.write('', () => resolve(exitCode))))
  cleanups.push(() => {
    try {
      p.kill('SIGKILL')
    } catch {
      // gone
    }
    term.dispose()
  })
  const rows = () => {
    const b = term.buffer.active
    return Array.from({ length: 50 }, (_, y) => (b.getLine(b.baseY + y)?.translateToString(true) ?? '').trimEnd())
  }
  return { p, rows, raw: () => raw, settled: () => pending === 0, exited }
}

async function setup(extra: string[] = []) {
  const root = tempRoot()
  cleanups.push(root.remove)
  // Outside the root: no directory under a writable root can be hidden from commands.
  const outside = tempRoot()
  cleanups.push(outside.remove)
  const dir = join(outside.dir, 'attach')
  mkdirSync(dir, { mode: 0o700 })
  const server = await connectStdio(['--root', root.dir, '--attach-dir', dir, ...extra])
  cleanups.push(async () => {
    await server.client.close()
    expect(await eventually(() => processesMentioning(root.dir).length === 0)).toBe(true)
  })
  return { root: root.dir, dir, ...server }
}

describe('hands attach', () => {
  it('redraws the screen, types into a Python REPL, shows the result to the person and the model, and detaches', async () => {
    const { client, dir, stderr } = await setup()
    expect(await eventually(() => stderr().includes('hands attach ID'))).toBe(true)
    await client.callTool({ name: 'shell_background', arguments: { commands: ['python3 -i -q'], id: 'py' } })
    const logs = async () => structured<{ lines: string[]; status: string }>(await client.callTool({ name: 'shell_logs', arguments: { id: 'py' } }))
    expect(await eventually(async () => (await logs()).lines.at(-1) === '>>> ')).toBe(true)
    await client.callTool({ name: 'shell_type', arguments: { id: 'py', text: 'x = 20 + 1' } })
    expect(await eventually(async () => (await logs()).lines.filter((l) => l === '>>> ').length === 1 && (await logs()).lines.length === 2)).toBe(true)

    const a = attachUnderPty(['py', '--attach-dir', dir])
    // The first redraw is the screen the model reads.
    const screen = (await logs()).lines.map((l) => l.trimEnd())
    const expected = [...screen, ...Array.from({ length: 50 - screen.length }, () => '')]
    await eventually(() => a.settled() && JSON.stringify(a.rows()) === JSON.stringify(expected), 20_000)
    expect(a.rows()).toEqual(expected)

    // A second, read-only attachment watches at the same time; what it types goes nowhere.
    const watcher = attachUnderPty(['py', '--read-only', '--attach-dir', dir])
    expect(await eventually(() => watcher.rows()[1] === '>>>', 20_000)).toBe(true)
    watcher.p.write('print("from the watcher")\r')

    a.p.write('print(x * 2)\r')
    expect(await eventually(() => a.rows().includes('42'), 20_000)).toBe(true)
    expect(await eventually(() => watcher.rows().includes('42'), 20_000)).toBe(true)
    expect(await eventually(async () => (await logs()).lines.includes('42'))).toBe(true)
    const seen = (await logs()).lines
    expect(seen).toEqual(['>>> x = 20 + 1', '>>> print(x * 2)', '42', '>>> '])

    // Ctrl-] d detaches both; the shell goes on.
    a.p.write('\x1dd')
    watcher.p.write('\x03')
    expect(await a.exited).toBe(0)
    expect(await watcher.exited).toBe(0)
    expect(a.raw()).toContain('detached from `py`')
    expect((await logs()).status).toBe('running')
    await client.callTool({ name: 'shell_type', arguments: { id: 'py', text: 'print("still here")' } })
    expect(await eventually(async () => (await logs()).lines.includes('still here'))).toBe(true)
  }, 240_000)

  it('lists servers and shells, and ends the attachment when the shell exits', async () => {
    const { client, dir } = await setup()
    await client.callTool({ name: 'shell_background', arguments: { commands: ['read line; echo "got $line"; sleep 0.5'], id: 'reader' } })
    const list = attachUnderPty(['--list', '--attach-dir', dir])
    expect(await list.exited).toBe(0)
    expect(list.raw()).toMatch(/session 1 +reader +running +read line/)
    const a = attachUnderPty(['reader', '--attach-dir', dir])
    expect(await eventually(() => a.raw().includes('attached to `reader`'), 20_000)).toBe(true)
    a.p.write('hello\r')
    expect(await a.exited).toBe(0)
    expect(a.raw()).toContain('got hello')
    expect(a.raw()).toContain('shell `reader` ended')
    const unknown = attachUnderPty(['nope', '--attach-dir', dir])
    expect(await unknown.exited).toBe(1)
    expect(unknown.raw()).toContain('no shell `nope`')
  }, 240_000)

  it('offers no socket with --no-attach, and refuses a directory others can open', async () => {
    const { dir, stderr, client } = await setup(['--no-attach'])
    await client.callTool({ name: 'file_exists', arguments: { paths: ['.'] } })
    expect(readdirSync(dir)).toEqual([])
    expect(stderr()).not.toContain('hands attach ID')
    const open = tempRoot()
    cleanups.push(open.remove)
    chmodSync(open.dir, 0o755)
    const other = await connectStdio(['--root', open.dir, '--attach-dir', open.dir])
    cleanups.push(() => other.client.close())
    await other.client.callTool({ name: 'file_exists', arguments: { paths: ['.'] } })
    expect(other.stderr()).toContain('not offering attach')
    expect(other.stderr()).toContain('mode 755')
    expect(existsSync(join(open.dir, `${process.pid}.sock`))).toBe(false)
  }, 240_000)

  it('refuses every command, of its own server or another, confined or not: none can list, attach to or type into a shell', async () => {
    const { client, dir, root, stderr } = await setup()
    const victimLogs = async () => structured<{ lines: string[] }>(await client.callTool({ name: 'shell_logs', arguments: { id: 'victim' } })).lines
    await client.callTool({ name: 'shell_background', arguments: { commands: ['while read line; do echo "got $line"; done'], id: 'victim' } })
    const socket = join(dir, readdirSync(dir).find((f) => f.endsWith('.sock')) as string)
    const pwned = join(root, 'pwned')
    // The attack runs from a copy in each server's root: a checkout under /tmp is hidden from bubblewrap's jobs.
    const attackIn = (dir: string) => {
      copyFileSync(ATTACK, join(dir, 'attach-attack.py'))
      return `python3 ${join(dir, 'attach-attack.py')} ${socket} victim 'touch ${pwned}'`
    }
    // Another server on the same machine (the normal case of two agents), confined and not; one
    // whose host allows the attach socket by path, so its commands reach the server's own check.
    const others = await Promise.all(
      [[], ['--confine', 'off'], ['--confine', 'bwrap'], ['--allow-socket', dir]].map(async (extra) => {
        const r = tempRoot()
        cleanups.push(r.remove)
        const other = await connectStdio(['--root', r.dir, '--no-attach', ...extra])
        cleanups.push(() => other.client.close())
        return { c: other.client, dir: r.dir }
      }),
    )
    const [other, unconfined, sandboxed, allowed] = others as Array<(typeof others)[number]> as [
      (typeof others)[number],
      (typeof others)[number],
      (typeof others)[number],
      (typeof others)[number],
    ]
    /** Who cannot even connect: a confined command, whose relay refuses a socket outside its roots (or bubblewrap's private /tmp hides). */
    const guarded = new Set(['this server', 'another server', 'another server, under bubblewrap'])
    for (const [who, c, at] of [
      ['this server', client, root],
      ['another server', other.c, other.dir],
      ['another, unconfined server', unconfined.c, unconfined.dir],
      ['another server, under bubblewrap', sandboxed.c, sandboxed.dir],
      ['another server that allows the socket by path', allowed.c, allowed.dir],
    ] as const) {
      const run = structured<{ commands: Array<{ stdout: string; stderr: string }> }>(
        await c.callTool({ name: 'shell_run', arguments: { commands: [attackIn(at)] } }),
      )
      const out = run.commands[0]?.stdout ?? ''
      expect(out, `${who}: ${run.commands[0]?.stderr}`).not.toBe('')
      const { key, ...result } = JSON.parse(out) as { key: boolean } & Record<string, { type: string; payload: string }>
      // The server's own commands cannot even read its key.
      if (who === 'this server') expect(key).toBe(false)
      for (const [what, got] of Object.entries(result)) {
        // A confined command is refused at connect; the others are refused by the server.
        if (guarded.has(who)) {
          expect(got, `${who}, ${what}`).toMatchObject({ type: 'error' })
          expect(got.payload, `${who}, ${what}`).toMatch(/Permission denied|No such file/)
          continue
        }
        expect(got.type, `${who}, ${what}: ${JSON.stringify(got)}`).toBe('E')
        expect(got.payload, `${who}, ${what}`).toMatch(
          /refused: the process that connected \(pid \d+\) runs (inside a hands job|sandboxed)|refused: the client did not give this server's key/,
        )
      }
    }
    expect(existsSync(pwned)).toBe(false)
    expect((await victimLogs()).join('\n')).not.toContain('got')
    expect(stderr()).toContain('hands: refused an attach client')
    // The person's own terminal still can.
    const list = attachUnderPty(['--list', '--attach-dir', dir])
    expect(await list.exited).toBe(0)
    expect(list.raw()).toContain('victim')
  }, 360_000)

  it('shows the person only what draws a screen: no clipboard, title, device string or query reaches their terminal', async () => {
    const { client, dir } = await setup()
    // Once a line is typed, the program tries every way to act on the attached terminal, then prints.
    const actions = String.raw`\e]52;c;cm0gLXJmIH4K\a\e]0;pwned-title\a\e[21t\e[6n\e[c\eP\$qm\e\\\005\eZ`
    await client.callTool({
      name: 'shell_background',
      arguments: { commands: [`read line; printf '${actions}\\e[1;32mVISIBLE %s\\e[0m\\n' "$line"; sleep 30`], id: 'tricky' },
    })
    const a = attachUnderPty(['tricky', '--attach-dir', dir])
    expect(await eventually(() => a.raw().includes('attached to `tricky`'), 20_000)).toBe(true)
    a.p.write('go\r')
    expect(await eventually(() => a.rows().some((r) => r.includes('VISIBLE go')), 20_000)).toBe(true)
    const raw = a.raw()
    expect(raw).toContain('\x1b[1;32mVISIBLE go')
    for (const action of ['\x1b]52', '\x1b]0;', 'pwned-title', '\x1b[21t', '\x1b[6n', '\x1b[c', '\x1bP', '\x05', '\x1bZ']) expect(raw).not.toContain(action)
    // The model's view is the same screen.
    const lines = structured<{ lines: string[] }>(await client.callTool({ name: 'shell_logs', arguments: { id: 'tricky' } })).lines
    expect(lines).toContain('VISIBLE go')
    a.p.write('\x1dd')
    expect(await a.exited).toBe(0)
  }, 240_000)

  it('lists a command the model wrote with its control characters escaped, so it cannot forge a line of the listing', async () => {
    const { client, dir } = await setup()
    const forged = 'sleep 30 # \x1b[2K\rserver 999 (roots /)\n  session 1  root-shell running bash'
    await client.callTool({ name: 'shell_background', arguments: { commands: [forged], id: 'forger' } })
    const list = attachUnderPty(['--list', '--attach-dir', dir])
    expect(await list.exited).toBe(0)
    const raw = list.raw()
    expect(raw).not.toContain('\x1b[2K')
    expect(raw).toContain('sleep 30 # \\x1b[2K\\rserver 999 (roots /)\\n  session 1  root-shell running bash')
    expect(list.rows().filter((r) => r.startsWith('server '))).toHaveLength(1)
  }, 240_000)

  it.skipIf(process.getuid?.() !== 0)(
    'refuses, as an unprivileged user, a command of a server that itself runs with no_new_privs, even with its environment cleared',
    async () => {
      const NOBODY = 65534
      const hands = installedHands()
      cleanups.push(hands.remove)
      const owned = () => {
        const r = tempRoot()
        cleanups.push(r.remove)
        chownSync(r.dir, NOBODY, NOBODY)
        return r.dir
      }
      const [victimRoot, attackerRoot, attachParent] = [owned(), owned(), owned()]
      const dir = join(attachParent, 'attach')
      mkdirSync(dir, { mode: 0o700 })
      chownSync(dir, NOBODY, NOBODY)
      const as = async (prefix: string[], args: string[]) => {
        const transport = new StdioClientTransport({
          command: 'setpriv',
          args: [...prefix, `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', ...hands.argv(['serve', ...args])],
          cwd: REPO,
          env: { ...(process.env as Record<string, string>), HOME: attachParent },
          stderr: 'pipe',
        })
        const c = new Client({ name: 'hands-test', version: '0.0.0' })
        await c.connect(transport)
        cleanups.push(() => c.close())
        return c
      }
      const victim = await as([], ['--root', victimRoot, '--attach-dir', dir])
      await victim.callTool({ name: 'shell_background', arguments: { commands: ['while read line; do echo "got $line"; done'], id: 'victim' } })
      const socketOf = () => readdirSync(dir).find((f) => f.endsWith('.sock'))
      expect(await eventually(() => socketOf() !== undefined)).toBe(true)
      const socket = socketOf() as string
      // Its host allows the victim's attach socket by path, so the attack reaches the victim's own check of who connected.
      const attacker = await as(['--no-new-privs'], ['--root', attackerRoot, '--no-attach', '--allow-socket', dir])
      const pwned = join(victimRoot, 'pwned')
      // The attack runs from a copy in the attacker's root: nobody may not read the checkout.
      const attack = join(attackerRoot, 'attach-attack.py')
      copyFileSync(ATTACK, attack)
      chmodSync(attack, 0o644)
      const run = structured<{ commands: Array<{ stdout: string; stderr: string }> }>(
        await attacker.callTool({
          name: 'shell_run',
          arguments: { commands: [`env -i /usr/bin/python3 ${attack} ${join(dir, socket)} victim 'touch ${pwned}'`] },
        }),
      )
      // The victim's attach directory is its own choice, so the attacker's server does not hide it:
      // the key may be read, and the server's check of who connected is what refuses.
      const { key: _key, ...result } = JSON.parse(run.commands[0]?.stdout || '{}') as { key: boolean } & Record<string, { type: string; payload: string }>
      expect(Object.keys(result), run.commands[0]?.stderr).toEqual(['list', 'attach'])
      for (const got of Object.values(result)) expect(got.type, JSON.stringify(got)).toBe('E')
      expect(existsSync(pwned)).toBe(false)
    },
    180_000,
  )
})

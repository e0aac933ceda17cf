import { chmodSync, existsSync, mkdirSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { IPty } from 'node-pty'
import { afterEach, describe, expect, it } from 'vitest'
import { connectStdio, REPO, structured } from './helpers/mcp.ts'
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
  const p: IPty = pty.spawn('pnpm', ['--silent', '--dir', REPO, 'hands', 'attach', ...args], {
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
  const exited = new Promise<number>((resolve) => p.onExit(({ exitCode }) => resolve(exitCode)))
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
  const dir = join(root.dir, 'attach')
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
  }, 120_000)

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
  }, 120_000)

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
  }, 120_000)
})

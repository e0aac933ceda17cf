/**
 * The screen hands shows against an oracle nobody here wrote: the same programs run under tmux
 * (Debian's, same 200x50 size, same TERM and environment), and hands' visible screen must equal
 * `tmux capture-pane -p` row by row after every step.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { TERMINAL } from '../../sandbox/src/env/child-env.ts'
import type { ShellRuntime } from '../src/index.ts'
import { FIXTURES, makeRuntime, tempDir } from './helpers.ts'

const COLS = 200
const ROWS = 50
let seq = 0
const servers: string[] = []
afterEach(() => {
  for (const name of servers.splice(0)) {
    try {
      execFileSync('tmux', ['-L', name, 'kill-server'], { stdio: 'ignore' })
    } catch {
      // already gone
    }
  }
})

/** One tmux server with one 200x50 pane running `script` under exactly `env`. */
function tmux(script: string, env: Record<string, string>, cwd: string) {
  const name = `hands-oracle-${process.pid}-${++seq}`
  servers.push(name)
  const conf = join(cwd, `${name}.conf`)
  writeFileSync(conf, ['set -g default-terminal xterm-256color', 'set -g status off', 'set -g escape-time 0', 'set -g history-limit 10000'].join('\n'))
  const envArgs = Object.entries(env).map(([k, v]) => `${k}=${v}`)
  const run = (...args: string[]) => execFileSync('tmux', ['-L', name, '-f', conf, ...args], { encoding: 'utf8' })
  run('new-session', '-d', '-x', String(COLS), '-y', String(ROWS), '-s', 't', '-c', cwd, 'env', '-i', ...envArgs, 'bash', '-c', `${script}; sleep 1000`)
  return {
    rows: () =>
      run('capture-pane', '-p', '-t', 't')
        .split('\n')
        .slice(0, ROWS)
        .map((r) => r.trimEnd()),
    keys: (...keys: string[]) => run('send-keys', '-t', 't', ...keys),
    literal: (text: string) => run('send-keys', '-t', 't', '-l', text),
  }
}

/** Both sides for one program: hands' background shell in `root/hands`, the tmux pane in `root/tmux`. */
async function both(rt: ShellRuntime, root: string, script: string, id: string) {
  const login = await rt.loginEnvironment()
  for (const side of ['hands', 'tmux']) mkdirSync(join(root, side), { recursive: true })
  const pane = tmux(script, { ...login.env, ...TERMINAL }, join(root, 'tmux'))
  await rt.shell_background({ commands: [script], id, cwd: 'hands' })
  return pane
}

const padded = (rows: string[]) => [...rows, ...Array.from({ length: Math.max(0, ROWS - rows.length) }, () => '')].slice(0, ROWS)

/** Wait until hands' screen equals the pane's (after `normalize`), then assert it, showing the rows that differ. */
async function sameScreen(rt: ShellRuntime, id: string, pane: ReturnType<typeof tmux>, normalize: (rows: string[]) => string[] = (r) => r) {
  const hands = () => normalize(padded(rt.screen(id)?.rows ?? []))
  const oracle = () => normalize(pane.rows())
  const started = Date.now()
  const deadline = started + 20_000
  let stableSince = 0
  let last = ''
  while (Date.now() < deadline) {
    const a = hands()
    const b = oracle()
    const key = JSON.stringify([a, b])
    if (key !== last) {
      last = key
      stableSince = Date.now()
    }
    // Equal and unchanged for a moment; a blank screen only counts once the programs had time to draw.
    if (JSON.stringify(a) === JSON.stringify(b) && Date.now() - stableSince > 300 && (a.some((r) => r !== '') || Date.now() - started > 3000)) break
    await sleep(100)
  }
  expect(hands()).toEqual(oracle())
}

/**
 * Masks what differs between two runs of top by nature: every number (clock, uptime, load,
 * memory, CPU, times) with the blanks that pad it to its column, since a wider number eats them.
 */
const topMask = (rows: string[]) => rows.map((r) => r.replace(/ *[0-9][0-9.:,]*/g, ' #').replace(/ +/g, ' '))

describe('the screen against tmux', () => {
  it('cursor movement, a cursor-up progress display and a full-screen redraw', async () => {
    const { rt, root } = makeRuntime()
    await sameScreen(rt, 'a', await both(rt, root, "printf 'abc\\033[2Dxy'", 'a'))
    expect(rt.screen('a')?.rows[0]).toBe('axy')
    await sameScreen(rt, 'p', await both(rt, root, `bash ${FIXTURES}/progress-lines.sh`, 'p'))
    expect((await rt.shell_logs({ id: 'p' })).lines).toEqual(['fetch 100%', 'build  50%', 'done'])
    await sameScreen(rt, 'alt', await both(rt, root, "printf '\\033[?1049h\\033[2J\\033[5;10HHELLO\\033[6;10HWORLD'", 'alt'))
    expect((await rt.shell_logs({ id: 'alt' })).is_screen).toBe(true)
  }, 240_000)

  it('a Python curses program drawing at fixed positions', async () => {
    const { rt, root } = makeRuntime()
    const pane = await both(rt, root, `python3 ${FIXTURES}/curses-draw.py`, 'draw')
    await sameScreen(rt, 'draw', pane)
    expect(rt.screen('draw')?.rows[10]).toBe(`${' '.repeat(40)}middle`)
  }, 240_000)

  it('an arrow-key menu answered with shell_type', async () => {
    const { rt, root } = makeRuntime()
    const pane = await both(rt, root, `python3 ${FIXTURES}/curses-menu.py`, 'menu')
    await sameScreen(rt, 'menu', pane)
    for (const [key, name] of [
      ['\x1b[B', 'Down'],
      ['\x1b[B', 'Down'],
      ['\x1b[A', 'Up'],
      ['\x1b[B', 'Down'],
    ] as const) {
      await rt.shell_type({ id: 'menu', text: key, is_enter: false })
      pane.keys(name)
      await sameScreen(rt, 'menu', pane)
    }
    expect(rt.screen('menu')?.rows).toContain('  > cherry')
    await rt.shell_type({ id: 'menu', text: '' })
    pane.keys('Enter')
    await sameScreen(rt, 'menu', pane)
    expect((await rt.shell_logs({ id: 'menu' })).lines).toContain('picked cherry')
  }, 240_000)

  it('vim: open a file, type, :wq', async () => {
    const { rt, root } = makeRuntime()
    const pane = await both(rt, root, 'vim --clean -n notes.txt', 'vim')
    await sameScreen(rt, 'vim', pane)
    expect((await rt.shell_logs({ id: 'vim' })).is_screen).toBe(true)
    await rt.shell_type({ id: 'vim', text: 'i', is_enter: false })
    pane.literal('i')
    await sameScreen(rt, 'vim', pane)
    await rt.shell_type({ id: 'vim', text: 'hello from vim', is_enter: false })
    pane.literal('hello from vim')
    await rt.shell_type({ id: 'vim', text: '\x1b', is_enter: false })
    pane.keys('Escape')
    await sameScreen(rt, 'vim', pane)
    await rt.shell_type({ id: 'vim', text: ':wq', is_enter: false })
    pane.literal(':wq')
    await sameScreen(rt, 'vim', pane)
    await rt.shell_type({ id: 'vim', text: '' })
    pane.keys('Enter')
    await sameScreen(rt, 'vim', pane)
    for (const side of ['hands', 'tmux']) expect(readFileSync(join(root, side, 'notes.txt'), 'utf8')).toBe('hello from vim\n')
  }, 240_000)

  it('less: open, page down, quit', async () => {
    const { rt, root } = makeRuntime()
    const pane = await both(rt, root, 'seq -f "line %g" 1 300 > lines.txt; less lines.txt', 'less')
    await sameScreen(rt, 'less', pane)
    expect((await rt.shell_logs({ id: 'less' })).is_screen).toBe(true)
    await rt.shell_type({ id: 'less', text: ' ', is_enter: false })
    pane.literal(' ')
    await sameScreen(rt, 'less', pane)
    expect(rt.screen('less')?.rows[0]).toBe('line 50')
    await rt.shell_type({ id: 'less', text: 'q', is_enter: false })
    pane.literal('q')
    await sameScreen(rt, 'less', pane)
  }, 240_000)

  it('top -b -n 1 and interactive top (numbers masked)', async () => {
    const { rt, root } = makeRuntime()
    const dir = tempDir('top')
    // Both tops watch the same single process, so their tables hold the same row.
    const target = execFileSync('bash', ['-c', `cd ${dir} && (setsid sleep 300 >/dev/null 2>&1 & echo $!)`], { encoding: 'utf8' }).trim()
    try {
      await sameScreen(rt, 'topb', await both(rt, root, `top -b -n 1 -p ${target}`, 'topb'), topMask)
      expect(rt.screen('topb')?.rows.some((r) => r.includes('sleep'))).toBe(true)
      const pane = await both(rt, root, `top -d 1 -p ${target}`, 'top')
      await sameScreen(rt, 'top', pane, topMask)
      expect(rt.screen('top')?.rows[6]).toMatch(/PID +USER/)
      await rt.shell_type({ id: 'top', text: 'q', is_enter: false })
      pane.literal('q')
      await sameScreen(rt, 'top', pane, topMask)
    } finally {
      process.kill(Number(target), 'SIGKILL')
    }
  }, 240_000)
})

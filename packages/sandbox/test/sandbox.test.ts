/**
 * The sandbox on its own, as a team that wants only it would use it: createSandbox and the
 * hands-sandbox CLI confine a command to its roots, stop its whole tree, and say what it changed.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { finished } from 'node:stream/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandbox, SandboxUnavailableError, type Sandbox } from '../src/index.ts'

const CLI = join(import.meta.dirname, '..', 'src', 'cli', 'main.ts')
/**
 * A bound that proves only "it does not hang": under `pnpm test` these run beside the other
 * packages' suites, one of which fork-bombs the machine on purpose (shell-runtime's pressure test),
 * starving every process here of CPU for up to a minute.
 */
const BOUND = { timeout: 300_000 }
const made: string[] = []
const open: Sandbox[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()))
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true })
})

function dir(): string {
  const d = realpathSync(mkdtempSync(join(tmpdir(), 'hands-sandbox-test-')))
  made.push(d)
  return d
}

async function text(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = []
  stream.on('data', (c: Buffer) => chunks.push(c))
  await finished(stream).catch(() => undefined)
  return Buffer.concat(chunks).toString('utf8')
}

/** Files in `dir` still being rewritten half a second from now: a process that should be gone is not. */
async function stillTicking(dir: string): Promise<string[]> {
  const seen = () => new Map(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'utf8')]))
  const before = seen()
  await new Promise((r) => setTimeout(r, 500))
  const after = seen()
  return [...after].filter(([f, t]) => before.get(f) !== t).map(([f]) => f)
}

describe.each(['landlock', 'bwrap'] as const)('createSandbox (%s)', BOUND, (confine) => {
  it('writes under the root, is refused outside it, and says what it changed', async () => {
    const root = dir()
    const outside = dir()
    writeFileSync(join(root, 'old.txt'), 'old\n')
    const sandbox = createSandbox({ roots: [root], confine })
    open.push(sandbox)
    expect(sandbox.kind).toBe(confine)
    const job = await sandbox.run(`echo new > new.txt; echo more >> old.txt; echo x > ${outside}/escape.txt; echo done`)
    const [stdout, stderr] = [text(job.stdout), text(job.stderr)]
    const end = await job.done
    expect(await stdout).toBe('done\n')
    expect(await stderr).toMatch(/escape\.txt: (Permission denied|Read-only file system|No such file or directory)/)
    expect(end.exit).toBe(0)
    expect(existsSync(join(outside, 'escape.txt'))).toBe(false)
    expect(readFileSync(join(root, 'new.txt'), 'utf8')).toBe('new\n')
    expect(end.changes).toMatchObject({ created: ['new.txt'], modified: ['old.txt'], outside_roots: 0, is_complete: true })
  })

  it('stops the whole tree, what the command left running included, and leaves no process behind', async () => {
    const root = dir()
    const sandbox = createSandbox({ roots: [root], confine })
    open.push(sandbox)
    // Each process of the tree keeps touching a file of its own while it lives.
    const ticker = (name: string) => `while :; do date +%s%N > ${name}; sleep 0.05; done`
    const left = await sandbox.run(`(${ticker('orphan')}) & disown; (${ticker('child')} &); echo started`)
    const end = await left.done
    expect(end.exit).toBe(0)
    // Under bubblewrap its pid namespace ends with bash, taking the rest with it before they are counted.
    if (confine === 'landlock') expect(end.leftovers).toBeGreaterThanOrEqual(1)
    const running = await sandbox.run(ticker('running'))
    await new Promise((r) => setTimeout(r, 200))
    await running.stop()
    expect((await running.done).signal).not.toBeNull()
    // Stopped the moment it started, before its bash may be in its tree: it still ends.
    const early = await sandbox.run(ticker('early'))
    await early.stop()
    expect((await early.done).exit).not.toBe(0)
    expect(await stillTicking(root)).toEqual([])
  })

  it('cuts the network when asked', async () => {
    const root = dir()
    const sandbox = createSandbox({ roots: [root], confine, network: false })
    open.push(sandbox)
    const job = await sandbox.run('timeout 5 bash -c "exec 3<>/dev/tcp/192.0.2.1/9"')
    const stderr = text(job.stderr)
    expect((await job.done).exit).not.toBe(0)
    expect(await stderr).toMatch(/Operation not permitted|Network is unreachable|Permission denied/)
  })
})

describe('createSandbox, bad input', BOUND, () => {
  it('refuses a missing root and a cwd outside the roots, starting nothing', async () => {
    expect(() => createSandbox({ roots: [] })).toThrow(/at least one/)
    expect(() => createSandbox({ roots: ['/nonexistent/hands'] })).toThrow(/does not exist/)
    const root = dir()
    const sandbox = createSandbox({ roots: [root] })
    open.push(sandbox)
    await expect(sandbox.run('true', { cwd: tmpdir() })).rejects.toThrow(/not under a root/)
  })

  it('fails closed where no mechanism can confine commands, saying what is missing', () => {
    const root = dir()
    const saved = process.env['HANDS_CONFINE_UNAVAILABLE']
    process.env['HANDS_CONFINE_UNAVAILABLE'] = 'landlock,bwrap'
    try {
      expect(() => createSandbox({ roots: [root] })).toThrow(SandboxUnavailableError)
    } finally {
      if (saved === undefined) delete process.env['HANDS_CONFINE_UNAVAILABLE']
      else process.env['HANDS_CONFINE_UNAVAILABLE'] = saved
    }
  })
})

describe('hands-sandbox', BOUND, () => {
  const cli = (args: string[]) =>
    spawnSync(process.execPath, ['--conditions=hands-source', '--import', 'tsx', CLI, ...args], { encoding: 'utf8', cwd: import.meta.dirname })

  it('runs a command confined, prints its output, its exit and what it changed, and exits with its code', () => {
    const root = dir()
    mkdirSync(join(root, 'src'))
    const r = cli(['--root', root, '--', 'echo hi; touch src/a.txt; touch /etc/hands-escape; exit 3'])
    expect(r.status).toBe(3)
    expect(r.stdout).toBe('hi\n')
    expect(r.stderr).toMatch(/hands-sandbox: exit 3/)
    expect(r.stderr).toMatch(/hands-sandbox: changed 1: src\/a\.txt \(created\)/)
    expect(existsSync('/etc/hands-escape')).toBe(false)
  })

  it('prints the whole account as JSON with --json, and the mechanism with --explain', () => {
    const root = dir()
    const r = cli(['--root', root, '--json', '--', 'printf x > f.txt'])
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ exit: 0, signal: null, stdout: '', changes: { created: ['f.txt'], is_complete: true } })
    const e = cli(['--root', root, '--no-network', '--explain'])
    expect(e.status).toBe(0)
    expect(e.stdout).toMatch(/^commands are confined by (Landlock|bubblewrap)/)
    expect(e.stdout).toMatch(/network: cut/)
  })

  it('refuses bad input with a clear message and exit 2, running nothing', () => {
    const root = dir()
    for (const [args, said] of [
      [['--', 'true'], /at least one --root/],
      [['--root', root], /give the command after --/],
      [['--root', root, '--confine', 'chroot', '--', 'true'], /--confine takes auto, landlock, bwrap or off/],
      [['--root', root, '--bogus', '--', 'true'], /Unknown option/],
    ] as const) {
      const r = cli([...args])
      expect(r.status, args.join(' ')).toBe(2)
      expect(r.stderr).toMatch(said)
    }
  })
})

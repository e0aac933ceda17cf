import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describeConfinement } from '@hands/shell-runtime'
import { afterEach, describe, expect, it } from 'vitest'
import { handsArgv } from './helpers/cli.ts'
import { REPO } from './helpers/mcp.ts'
import { tempRoot } from './helpers/tmp.ts'

const cleanups: Array<() => void> = []
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()?.()
})

/** `hands ARGS` run in `cwd`, as the installed bin runs. */
function hands(args: string[], cwd = REPO, env: Record<string, string> = {}) {
  const [command, ...argv] = handsArgv(args)
  const r = spawnSync(command, argv, { cwd, encoding: 'utf8', timeout: 120_000, env: { ...process.env, ...env } })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** `pnpm hands ARGS` typed in `cwd`: the README's way to run the source from the repo (the script runs in the repo root). */
function pnpmHands(args: string[], cwd: string) {
  const r = spawnSync('pnpm', ['--silent', '--dir', REPO, 'hands', ...args], { cwd, encoding: 'utf8', timeout: 120_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('hands CLI', () => {
  it('call prints the result object as JSON and exits 0', () => {
    const root = tempRoot()
    cleanups.push(root.remove)
    writeFileSync(join(root.dir, 'a.txt'), 'x')
    const r = hands(['call', 'file_exists', '{"paths":["a.txt","b.txt"]}', '--root', root.dir])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({
      paths: [
        { path: 'a.txt', is_exists: true },
        { path: 'b.txt', is_exists: false },
      ],
    })
  }, 120_000)

  it('call runs shell_run in the root and prints its account', () => {
    const root = tempRoot()
    cleanups.push(root.remove)
    const r = hands(['call', 'shell_run', '{"commands":["pwd","exit 3"]}', '--root', root.dir])
    expect(r.code).toBe(0)
    const result = JSON.parse(r.stdout)
    expect(result.commands[0].stdout).toBe(`${root.dir}\n`)
    expect(result.exit).toBe(3)
  }, 120_000)

  it('call prints the error envelope and exits 1 when the tool refuses, changing nothing', () => {
    const root = tempRoot()
    cleanups.push(root.remove)
    const r = hands(['call', 'create_directory', '{"paths":[]}', '--root', root.dir])
    expect(r.code).toBe(1)
    expect(JSON.parse(r.stdout)).toMatchObject({ tool: 'create_directory', code: 'invalid_input', is_preflight: true })
    const outside = hands(['call', 'create_directory', '{"paths":["../escape"]}', '--root', root.dir])
    expect(JSON.parse(outside.stdout)).toMatchObject({ code: 'outside_roots' })
    expect(existsSync(join(root.dir, '..', 'escape'))).toBe(false)
  }, 120_000)

  it('call defaults the root to the directory the command is run from, also through `pnpm hands` from the repo', () => {
    const root = tempRoot()
    cleanups.push(root.remove)
    const r = hands(['call', 'create_directory', '{"paths":["made-here"]}'], root.dir)
    expect(r.code).toBe(0)
    expect(existsSync(join(root.dir, 'made-here'))).toBe(true)
    const viaPnpm = pnpmHands(['call', 'create_directory', '{"paths":["made-by-pnpm"]}'], root.dir)
    expect(viaPnpm.code, viaPnpm.stderr).toBe(0)
    expect(JSON.parse(viaPnpm.stdout)).toEqual({ paths: [{ path: 'made-by-pnpm', is_created: true }] })
    expect(existsSync(join(root.dir, 'made-by-pnpm'))).toBe(true)
  }, 120_000)

  it('call exits 2 with a usage message for JSON that does not parse', () => {
    const r = hands(['call', 'file_exists', '{paths'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('JSON is not valid')
  }, 120_000)

  it('tools lists the enabled tools with their token cost and a total, then how commands are confined', () => {
    const r = hands(['tools'])
    expect(r.code).toBe(0)
    const [table, confinement] = r.stdout.trim().split('\n\n')
    const lines = (table ?? '').split('\n')
    expect(lines).toHaveLength(11)
    expect(confinement).toBe(describeConfinement({ roots: [REPO] }).summary)
    expect(confinement).toMatch(/^commands are confined by (Landlock|bubblewrap)/)
    expect(lines[0]).toMatch(/^shell_run\s+\d+\s+Run shell commands$/)
    const sum = lines.slice(0, 10).reduce((a, l) => a + Number(/\s(\d+)\s/.exec(l)?.[1]), 0)
    expect(lines[10]).toMatch(new RegExp(`^total\\s+${sum}\\s+10 of 10 tools`))
    const off = hands(['tools', '--no-shell'])
    expect(off.stdout.trim().split('\n')).toHaveLength(6)
    const unconfined = hands(['tools', '--confine', 'off'])
    expect(unconfined.stdout).toContain('commands run UNCONFINED: the host switched confinement off')
  }, 120_000)

  it('confinement flags: a bad --confine is a usage error, and a mechanism that cannot work here is refused at start', () => {
    const bad = hands(['tools', '--confine', 'chroot'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--confine takes auto, landlock, bwrap, off, got "chroot"')
    const r = hands(['serve', '--confine', 'bwrap'], REPO, { HANDS_CONFINE_UNAVAILABLE: 'bwrap' })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('confine: "bwrap" was asked for, but bubblewrap is marked unavailable')
    const flags = hands(['tools', '--confine', 'landlock', '--no-network', '--allow-write', '/var/tmp', '--deny-read', '/etc/hostname'])
    expect(flags.stdout).toContain('1 --allow-write path')
    expect(flags.stdout).toContain('1 --deny-read path')
    expect(flags.stdout).toContain('network: cut: no socket but UNIX and netlink can be made (the seccomp filter), and Landlock refuses TCP bind and connect')
  }, 240_000)

  it('tools --code-tool none lists the descriptions for a harness without a code tool, as budgeted in generated/no-code-tool', () => {
    const committed = (file: string) => JSON.parse(readFileSync(join(REPO, 'generated', 'no-code-tool', file), 'utf8'))
    const budget = committed('budget.json') as { total: { tokens: number }; tools: Array<{ name: string; tokens: number }> }
    const r = hands(['tools', '--code-tool', 'none'])
    expect(r.code).toBe(0)
    const lines = r.stdout.split('\n')
    for (const t of budget.tools)
      expect(
        lines.some((l) => new RegExp(`^${t.name}\\s+${t.tokens}\\s`).test(l)),
        t.name,
      ).toBe(true)
    expect(r.stdout).toMatch(
      new RegExp(`^total\\s+${budget.total.tokens}\\s+10 of 10 tools, o200k_base tokens, descriptions for a harness without a code tool$`, 'm'),
    )
    expect(hands(['tools']).stdout).toMatch(/^total\s+\d+\s+10 of 10 tools, o200k_base tokens, descriptions naming the code tool python_execution$/m)
    const json = hands(['tools', '--code-tool', 'none', '--format', 'openai'])
    expect(JSON.parse(json.stdout)).toEqual(committed('api/openai.json').tools)
    expect(json.stdout).not.toContain('python_execution')
    const empty = hands(['tools', '--code-tool', ''])
    expect(empty.code).toBe(2)
    expect(empty.stderr).toContain('--code-tool takes a tool name, or none for a harness without one')
  }, 240_000)

  it('tools --format anthropic prints the API definitions', () => {
    const r = hands(['tools', '--format', 'anthropic', '--no-shell'])
    const tools = JSON.parse(r.stdout)
    expect(tools.map((t: { name: string }) => t.name)).toEqual(['copy', 'move', 'delete', 'create_directory', 'file_exists'])
    expect(Object.keys(tools[0])).toEqual(['name', 'description', 'input_schema'])
  }, 120_000)

  it('has --help on every command and rejects an unknown one', () => {
    for (const cmd of [[], ['serve'], ['call'], ['tools']]) {
      const r = hands([...cmd, '--help'])
      expect(r.code, cmd.join(' ')).toBe(0)
      expect(r.stdout, cmd.join(' ')).toContain('usage: hands')
    }
    const bad = hands(['frobnicate'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('unknown command "frobnicate"')
    const flag = hands(['serve', '--ring-lines', 'many'])
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain('--ring-lines takes a positive integer')
  }, 240_000)

  it('serve documents the HTTP limits and refuses them without --http or with a bad value', () => {
    const help = hands(['serve', '--help'])
    for (const f of ['--session-idle-ms', '--max-sessions', '--max-body-bytes', '--allow-host']) expect(help.stdout).toContain(f)
    const stdio = hands(['serve', '--max-sessions', '4'])
    expect(stdio.code).toBe(2)
    expect(stdio.stderr).toContain('--max-sessions applies to --http only')
    const bad = hands(['serve', '--http', '127.0.0.1:0', '--session-idle-ms', '0'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--session-idle-ms takes a positive integer')
  }, 240_000)
})

import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO } from './helpers.ts'

const CLI = join(REPO, 'tools', 'codegen', 'cli.ts')
const TSX = join(REPO, 'node_modules', '.bin', 'tsx')

function gen(args: string[], cwd = REPO, nodeArgs: string[] = []) {
  return spawnSync(TSX, [...nodeArgs, '--conditions=hands-source', CLI, ...args], { cwd, encoding: 'utf8' })
}

/** Node arguments that make codegen load the shell_run renderer with its `[no newline at end]` marker changed (the files stay as they are). */
const CHANGED_RENDERER = ['--import', join(import.meta.dirname, 'fixtures', 'alter-rendering.mjs')]

describe('generated/', () => {
  it('is what codegen renders from the contracts (pnpm gen --check is clean)', () => {
    const r = gen(['--check'])
    expect(r.stderr + r.stdout).toContain('generated/ is up to date')
    expect(r.status).toBe(0)
  })

  it('starts every file with a header naming its source and pnpm gen', async () => {
    const { generatedFiles } = await import('./helpers.ts')
    for (const f of generatedFiles()) {
      const head = f.text.split('\n').slice(0, 3).join('\n')
      expect(head, f.path).toContain('packages/contracts')
      expect(head, f.path).toContain('pnpm gen')
    }
  })

  it('lists the ten tools in surface.json in the shape other tooling reads, and ships the same file in @hands/contracts', () => {
    const text = readFileSync(join(REPO, 'generated', 'surface.json'), 'utf8')
    const surface = JSON.parse(text)
    expect(Object.keys(surface).filter((k) => k !== '$comment')).toEqual(['tools', 'errors', 'prompt', 'no_code_tool', 'rendering'])
    expect(surface.tools).toHaveLength(10)
    for (const t of surface.tools) {
      expect(Object.keys(t)).toEqual(['name', 'title', 'description', 'input_schema', 'result_schema', 'call', 'effect', 'annotations', 'toggle'])
      expect(t.toggle === 'shell' || t.toggle === null).toBe(true)
    }
    expect(surface.errors.codes.map((c: { code: string }) => c.code)).toContain('invalid_input')
    expect(Object.keys(surface.prompt)).toEqual(['shell_on', 'shell_off'])
    expect(surface.prompt.shell_off.executionLine).toBeNull()
    expect(Object.keys(surface.no_code_tool.descriptions)).toEqual(['shell_run', 'shell_background'])
    expect(Object.keys(surface.no_code_tool.prompt)).toEqual(['shell_on', 'shell_off'])
    expect(readFileSync(join(REPO, 'packages', 'contracts', 'surface.json'), 'utf8')).toBe(text)
  })
})

describe('pnpm gen --diff REF', () => {
  it('fails --exit-code on a change to how a result is rendered, and shows it line by line; --check fails on it too', { timeout: 240_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'hands-gen-render-'))
    try {
      const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' })
      git('init', '-q')
      git('config', 'user.email', 't@example.com')
      git('config', 'user.name', 't')
      mkdirSync(join(dir, 'packages', 'contracts'), { recursive: true })
      writeFileSync(join(dir, 'packages', 'contracts', 'surface.json'), readFileSync(join(REPO, 'generated', 'surface.json'), 'utf8'))
      git('add', '-A')
      git('commit', '-qm', 'the surface as committed')
      expect(gen(['--diff', 'HEAD', '--exit-code'], dir).status).toBe(0)

      const changed = gen(['--diff', 'HEAD', '--exit-code'], dir, CHANGED_RENDERER)
      expect(changed.stderr).toBe('')
      expect(changed.status).toBe(1)
      const lines = changed.stdout.split('\n')
      expect(lines).toContain('0 tool(s) changed, 0 added, 0 removed, 2 rendered example(s) changed')
      const at = lines.indexOf('    ~ shell_run · output without a final newline, in the workspace root')
      expect(lines.slice(at, at + 6)).toEqual([
        '    ~ shell_run · output without a final newline, in the workspace root',
        '          exit 0 · 4 ms · cwd .',
        '          $ printf done  [exit 0 · 3 ms]',
        '            done',
        '        - [no newline at end]',
        '        + [no final newline]',
      ])
      const md = gen(['--diff', 'HEAD', '--exit-code', '--format', 'md'], dir, CHANGED_RENDERER)
      expect(md.status).toBe(1)
      expect(md.stdout).toContain('#### Rendering')
      expect(md.stdout).toContain('  - [no newline at end]\n  + [no final newline]')

      const check = gen(['--check'], REPO, CHANGED_RENDERER)
      expect(check.status).toBe(1)
      expect(check.stderr).toMatch(
        /generated\/ is out of date; run `pnpm gen` \(\d+ files differ: generated\/surface\.json, packages\/contracts\/surface\.json, generated\/rendering\.md\)/,
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  // Six codegen runs: a generous bound on a loaded machine, not a timing.
  it('reports every change since an older commit, gates with --exit-code, prints Markdown, and reports nothing against the current surface', {
    timeout: 240_000,
  }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'hands-gen-diff-'))
    try {
      const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' })
      git('init', '-q')
      git('config', 'user.email', 't@example.com')
      git('config', 'user.name', 't')
      const current = readFileSync(join(REPO, 'generated', 'surface.json'), 'utf8')
      // An old commit from before the surface shipped in packages/contracts: only generated/.
      cpSync(join(REPO, 'generated'), join(dir, 'generated'), { recursive: true })
      const old = JSON.parse(current)
      const run = old.tools.find((t: { name: string }) => t.name === 'shell_run')
      run.description = 'Run commands and report each.'
      delete run.input_schema.properties.cwd
      run.input_schema.properties.timeout = { type: 'integer' }
      delete run.result_schema.properties.timed_out
      old.tools = old.tools.filter((t: { name: string }) => t.name !== 'file_exists')
      writeFileSync(join(dir, 'generated', 'surface.json'), JSON.stringify(old, null, 2))
      git('add', '-A')
      git('commit', '-qm', 'old surface')
      // A later commit ships the surface, with one prompt line and one description without a code tool worded differently.
      const shipped = JSON.parse(current)
      shipped.prompt.shell_on.batchLine = shipped.prompt.shell_on.batchLine.replace('never', 'not')
      shipped.no_code_tool.descriptions.shell_background = shipped.no_code_tool.descriptions.shell_background.replace(
        'for its output',
        'to read what it printed so far',
      )
      mkdirSync(join(dir, 'packages', 'contracts'), { recursive: true })
      writeFileSync(join(dir, 'packages', 'contracts', 'surface.json'), JSON.stringify(shipped, null, 2))
      git('add', '-A')
      git('commit', '-qm', 'shipped surface')

      const changed = gen(['--diff', 'HEAD~1'], dir)
      expect(changed.stderr).toBe('')
      expect(changed.status).toBe(0)
      const lines = changed.stdout.split('\n').map((l) => l.trim())
      expect(lines).toContain('hands contract: HEAD~1 → working tree')
      expect(lines.some((l) => /^~ tool shell_run · tokens \d+ → \d+ \([+-]\d+\), without a code tool \d+ → \d+ \([+-]\d+\)$/.test(l))).toBe(true)
      expect(lines.some((l) => /^~ description: .*\[-.*-\].*\{\+.*\+\}/.test(l))).toBe(true)
      expect(lines.some((l) => l.startsWith('+ input cwd: {"type":"string"'))).toBe(true)
      expect(lines).toContain('- input timeout: {"type":"integer"}')
      expect(lines.some((l) => l.startsWith('+ result timed_out: {"type":"boolean"'))).toBe(true)
      expect(lines.some((l) => /^\+ tool file_exists · tokens \d+$/.test(l))).toBe(true)
      expect(lines.some((l) => /^tool tokens \d+ → \d+ \(\+\d+\)/.test(l))).toBe(true)

      const gated = gen(['--diff', 'HEAD~1', '--exit-code', '--format', 'md'], dir)
      expect(gated.status).toBe(1)
      expect(gated.stdout).toContain('### hands contract diff')
      expect(gated.stdout).toContain('| `file_exists` | added |')

      // The shipped file is preferred over generated/: the prompt change shows, and gates.
      const prose = gen(['--diff', 'HEAD', '--exit-code'], dir)
      expect(prose.status).toBe(1)
      expect(prose.stdout).toContain('~ prompt prose')
      expect(prose.stdout).toMatch(/~ shell on: batchLine: .*\[-not-\]\{\+never\+\} one call per file/)
      expect(prose.stdout).toMatch(/~ description \(no code tool\): .*Then poll shell_logs \[-to read what it printed so far-\]\{\+for its output\+\}\.$/m)
      expect(prose.stdout).toMatch(/^~ tool shell_background · tokens \d+ \(±0\), without a code tool \d+ → \d+/m)

      writeFileSync(join(dir, 'packages', 'contracts', 'surface.json'), current)
      git('commit', '-qam', 'current surface')
      const same = gen(['--diff', 'HEAD', '--exit-code'], dir)
      expect(same.status).toBe(0)
      expect(same.stdout).toContain('no surface change')

      const bad = gen(['--diff', 'no-such-ref'], dir)
      expect(bad.status).toBe(2)
      expect(bad.stderr).toContain('cannot read packages/contracts/surface.json or generated/surface.json at no-such-ref')
      const usage = gen(['--exit-code'], dir)
      expect(usage.status).toBe(2)
      expect(usage.stderr).toContain('--format and --exit-code go with --diff REF')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

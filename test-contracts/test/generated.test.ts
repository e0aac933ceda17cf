import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync, cpSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO } from './helpers.ts'

const CLI = join(REPO, 'tools', 'codegen', 'cli.ts')
const TSX = join(REPO, 'node_modules', '.bin', 'tsx')

function gen(args: string[], cwd = REPO) {
  return spawnSync(TSX, ['--conditions=hands-source', CLI, ...args], { cwd, encoding: 'utf8' })
}

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

  it('lists the ten tools in surface.json in the shape other tooling reads', () => {
    const surface = JSON.parse(readFileSync(join(REPO, 'generated', 'surface.json'), 'utf8'))
    expect(Object.keys(surface).filter((k) => k !== '$comment')).toEqual(['tools', 'errors'])
    expect(surface.tools).toHaveLength(10)
    for (const t of surface.tools) {
      expect(Object.keys(t)).toEqual(['name', 'title', 'description', 'input_schema', 'result_schema', 'call', 'annotations', 'toggle'])
      expect(t.toggle === 'shell' || t.toggle === null).toBe(true)
    }
    expect(surface.errors.codes.map((c: { code: string }) => c.code)).toContain('invalid_input')
  })
})

describe('pnpm gen --diff REF', () => {
  it('reports description, property, result and token changes against an older commit, and nothing against the current one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hands-gen-diff-'))
    try {
      const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' })
      git('init', '-q')
      git('config', 'user.email', 't@example.com')
      git('config', 'user.name', 't')
      cpSync(join(REPO, 'generated'), join(dir, 'generated'), { recursive: true })
      const path = join(dir, 'generated', 'surface.json')
      const current = readFileSync(path, 'utf8')
      const old = JSON.parse(current)
      const run = old.tools.find((t: { name: string }) => t.name === 'shell_run')
      run.description = 'Run commands and wait for them.'
      delete run.input_schema.properties.cwd
      run.input_schema.properties.timeout = { type: 'integer' }
      delete run.result_schema.properties.timed_out
      old.tools = old.tools.filter((t: { name: string }) => t.name !== 'file_exists')
      writeFileSync(path, JSON.stringify(old, null, 2))
      git('add', '-A')
      git('commit', '-qm', 'old surface')
      writeFileSync(path, current)
      git('commit', '-qam', 'current surface')

      const changed = gen(['--diff', 'HEAD~1'], dir)
      expect(changed.status).toBe(0)
      const out = changed.stdout
      expect(out).toContain('~ tool shell_run')
      expect(out).toMatch(/description: .*\[-.*-\].*\{\+.*\+\}/)
      expect(out).toContain('+ input cwd (string, optional)')
      expect(out).toContain('- input timeout (integer, optional)')
      expect(out).toContain('+ result timed_out: boolean')
      expect(out).toMatch(/tokens: \d+ -> \d+ \([+-]\d+\)/)
      expect(out).toContain('+ tool file_exists')
      expect(out).toMatch(/total tokens: \d+ -> \d+/)

      const same = gen(['--diff', 'HEAD'], dir)
      expect(same.stdout.trim()).toBe('no surface change')

      const bad = gen(['--diff', 'no-such-ref'], dir)
      expect(bad.status).toBe(2)
      expect(bad.stderr).toContain('cannot read generated/surface.json at no-such-ref')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

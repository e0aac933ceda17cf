import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

const REPO = join(import.meta.dirname, '..', '..')
const SCRIPT = join(REPO, 'tools', 'ship-docs.mjs')
const dirs: string[] = []
afterEach(() => {
  while (dirs.length > 0) rmSync(dirs.pop() as string, { recursive: true, force: true })
})

/** A package directory with this README; ship-docs run in it. */
function ship(readme: string) {
  const dir = mkdtempSync(join(tmpdir(), 'hands-ship-docs-'))
  dirs.push(dir)
  writeFileSync(join(dir, 'README.md'), readme)
  const r = spawnSync(process.execPath, [SCRIPT], { cwd: dir, encoding: 'utf8' })
  return { dir, code: r.status, out: r.stdout, err: r.stderr }
}

describe('ship-docs', () => {
  it('copies the pages the README links to, the pages they link to, and generated pages linked from docs', () => {
    const r = ship('See [contracts](docs/contracts.md#errors) and `[not a link](docs/none.md)`.\n```md\n[nor this](docs/none.md)\n```\n')
    expect(r.code, r.err).toBe(0)
    expect(r.out).toBe('ship-docs: docs/contracts.md, generated/tools.md, docs/codegen.md\n')
    expect(readFileSync(join(r.dir, 'docs', 'contracts.md'), 'utf8')).toBe(readFileSync(join(REPO, 'docs', 'contracts.md'), 'utf8'))
    expect(existsSync(join(r.dir, 'generated', 'tools.md'))).toBe(true)
  })

  it('fails on a link out of the shipped folders, or to a page the repo does not have', () => {
    const out = ship('See [the repo](../../README.md).\n')
    expect(out.code).toBe(1)
    expect(out.err).toContain('README.md links to ../../README.md: a published page may link only to Markdown pages under docs/ or generated/')
    const missing = ship('See [gone](docs/gone.md).\n')
    expect(missing.code).toBe(1)
    expect(missing.err).toContain('README.md links to docs/gone.md, but the repo has no docs/gone.md')
  })
})

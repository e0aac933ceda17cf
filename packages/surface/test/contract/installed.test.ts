import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contract } from '../../src/cli/contract.ts'
import { handsArgv } from '../helpers/cli.ts'
import { REPO } from '../helpers/mcp.ts'
import { tempRoot } from '../helpers/tmp.ts'

const CONTRACTS = join(REPO, 'packages', 'contracts')

// Everything lives in a temp directory outside the workspace, as in a consuming project.
const root = tempRoot('hands-contract-installed-')
let tarball: string
let packageDir: string
let project: string
let next: string

/** `hands contract diff` in process, from the temp directory. */
function inProcess(...args: string[]) {
  let out = ''
  let err = ''
  const code = contract(['diff', ...args], { out: (t) => void (out += t), err: (t) => void (err += t) }, root.dir)
  return { code, out, err }
}

/** The `hands` bin, as built, run from the temp directory. */
function hands(...args: string[]) {
  const [node, ...argv] = handsArgv(args)
  const r = spawnSync(node, argv, { cwd: root.dir, encoding: 'utf8' })
  return { code: r.status, out: r.stdout, err: r.stderr }
}

beforeAll(() => {
  const packed = JSON.parse(
    execFileSync('npm', ['pack', CONTRACTS, '--pack-destination', root.dir, '--json', '--ignore-scripts'], { encoding: 'utf8' }),
  ) as Array<{ filename: string }>
  tarball = join(root.dir, packed[0]!.filename)
  mkdirSync(join(root.dir, 'unpacked'))
  execFileSync('tar', ['-xf', tarball, '-C', join(root.dir, 'unpacked')])
  packageDir = join(root.dir, 'unpacked', 'package')
  // A consuming project with the packed version installed.
  project = join(root.dir, 'project')
  mkdirSync(join(project, 'node_modules', '@hands'), { recursive: true })
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, dependencies: { '@hands/contracts': '0.1.0' } }))
  cpSync(packageDir, join(project, 'node_modules', '@hands', 'contracts'), { recursive: true })
  // The next version's surface: shell_logs may return more lines.
  const surface = JSON.parse(readFileSync(join(packageDir, 'surface.json'), 'utf8'))
  surface.tools.find((t: { name: string }) => t.name === 'shell_logs').input_schema.properties.n.maximum = 5000
  next = join(root.dir, 'next-surface.json')
  writeFileSync(next, JSON.stringify(surface, null, 2))
}, 240_000)
afterAll(root.remove)

// Each case starts the CLI (a few seconds each on a loaded machine): a generous bound, not a timing.
describe('hands contract diff from an installed package', { timeout: 240_000 }, () => {
  it('ships surface.json in the packed @hands/contracts, identical to generated/surface.json', () => {
    expect(readFileSync(join(packageDir, 'surface.json'), 'utf8')).toBe(readFileSync(join(REPO, 'generated', 'surface.json'), 'utf8'))
  })

  it('diffs a packed tarball against a changed surface file and fails --exit-code', () => {
    const r = hands('contract', 'diff', tarball, next, '--exit-code')
    expect(r.err).toBe('')
    expect(r.code).toBe(1)
    expect(r.out).toContain(`hands contract: @hands/contracts@0.1.0 (${tarball}) → ${next}`)
    expect(r.out).toContain('~ input n.maximum: 2000 → 5000')
  })

  it('finds the installed version in a project directory and the package in a package directory; equal versions exit 0', () => {
    const r = hands('contract', 'diff', 'project', packageDir, '--exit-code')
    expect(r.code).toBe(0)
    expect(r.out).toContain('@hands/contracts@0.1.0 (project/node_modules/@hands/contracts)')
    expect(r.out).toContain('no surface change')
  })

  it('fetches an npm spec with npm pack (a file: spec here, offline) and defaults B to the contracts of this hands', () => {
    const r = hands('contract', 'diff', `file:${tarball}`, '--exit-code', '--format', 'md')
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    expect(r.out).toContain(`\`@hands/contracts@0.1.0 (file:${tarball})\` → \`@hands/contracts@0.1.0 (this hands)\``)
    expect(r.out).toContain('**No surface change.**')
  })

  it('exits 2 naming what it accepts for a missing file, a directory without the package, and a version without surface.json', () => {
    const missing = inProcess('./nope.json', next)
    expect(missing.code).toBe(2)
    expect(missing.err).toContain('./nope.json: no such file or directory; give a surface file (.json)')
    const empty = join(root.dir, 'empty')
    mkdirSync(empty)
    const dir = inProcess('empty', next)
    expect(dir.code).toBe(2)
    expect(dir.err).toContain('empty is a directory without @hands/contracts')
    const old = join(root.dir, 'old-package')
    cpSync(packageDir, old, { recursive: true })
    rmSync(join(old, 'surface.json'))
    const before = inProcess(old, next)
    expect(before.code).toBe(2)
    expect(before.err).toContain('has no surface.json: versions before the contract diff do not ship one')
    const notSurface = join(root.dir, 'package.json.json')
    writeFileSync(notSurface, '{"name": "x"}')
    const shape = inProcess(notSurface, next)
    expect(shape.code).toBe(2)
    expect(shape.err).toContain('is not a hands surface file: it needs "tools"')
  })

  it('prints its usage with --help and exits 2 on bad usage', () => {
    expect(hands('contract', '--help').out).toContain('usage: hands contract diff A [B]')
    const bad = hands('contract', 'diff')
    expect(bad.code).toBe(2)
    expect(bad.err).toContain('contract diff takes A and optionally B')
  })
})

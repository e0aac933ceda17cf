import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative as relativeTo, resolve } from 'node:path'
import { publint } from 'publint'
import { formatMessage } from 'publint/utils'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { readMarkdown } from '../src/markdown.ts'
import { PUBLISHED, REPO, tarballFiles, tarballManifest, unpack } from '../src/packages.ts'

const unpacked = mkdtempSync(join(tmpdir(), 'hands-unpacked-'))
afterAll(() => rmSync(unpacked, { recursive: true, force: true }))

/** The version of `dependency` the workspace installed for `pkg` (what its tests ran against). */
function workspaceVersion(pkg: string, dependency: string): string {
  const dir = join(REPO, 'packages', pkg, 'node_modules', ...dependency.split('/'))
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version
}

const tarballs = inject('tarballs')
const attw = join(import.meta.dirname, '..', 'node_modules', '.bin', 'attw')
const relative = (path: string) => path.replace(/^\.\//, '')

describe.each(PUBLISHED)('the packed @hands/%s', (name) => {
  const tarball = tarballs[name]
  const files = tarballFiles(tarball)
  const manifest = tarballManifest(tarball)
  const exports = manifest['exports'] as Record<string, string | Record<string, string>>

  it('holds dist, src, README, LICENSE and the files its exports name, and no tests or configs', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'LICENSE',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/index.js.map',
        'dist/index.d.ts.map',
        'src/index.ts',
      ]),
    )
    const exportedFiles = Object.values(exports)
      .filter((e): e is string => typeof e === 'string')
      .map(relative)
    // Besides dist/ and src/, a package ships only what its `files` names (sandbox: the confine helper).
    const listed = ((manifest['files'] ?? []) as string[]).filter((f) => !['dist', 'src', 'README.md', 'LICENSE'].includes(f))
    // A `files` entry is a path, a directory or a glob with `*` (`native/*.c`).
    const asPattern = (l: string) => new RegExp(`^${l.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/.*)?$`)
    const isListed = (f: string) => listed.some((l) => asPattern(l).test(f))
    const stray = files.filter((f) => !/^(dist|src)\//.test(f) && !['package.json', 'README.md', 'LICENSE', ...exportedFiles].includes(f) && !isListed(f))
    expect(stray).toEqual([])
    if (name === 'sandbox') expect(files).toContain('native/bin/linux-x64/hands-confine')
    expect(files.filter((f) => /(^|\/)test\/|\.test\.|tsconfig|vitest/.test(f))).toEqual([])
  })

  it('publishes every subpath the workspace exports (publishConfig.exports mirrors exports)', () => {
    const workspace = JSON.parse(readFileSync(join(REPO, 'packages', name, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }
    expect(Object.keys(exports)).toEqual(Object.keys(workspace.exports))
  })

  it('has a manifest with real versions, the dist exports only, and the metadata a registry shows', () => {
    expect(JSON.stringify(manifest)).not.toMatch(/workspace:|catalog:|hands-source/)
    expect(manifest).toMatchObject({ license: 'MIT', type: 'module', sideEffects: false, engines: { node: '>=20' } })
    for (const entry of Object.values(exports)) {
      if (typeof entry === 'string') {
        expect(files).toContain(relative(entry))
        continue
      }
      expect(Object.keys(entry)).toEqual(['types', 'default'])
      expect(entry['default']).toMatch(/^\.\/dist\/.*\.js$/)
      expect(files).toEqual(expect.arrayContaining([relative(entry['default'] as string), relative(entry['types'] as string)]))
    }
  })

  it('depends on caret ranges whose floor is the version the workspace tested, so an app with a newer patch or minor keeps one copy', () => {
    const ranges = { ...(manifest['dependencies'] as Record<string, string>), ...((manifest['optionalDependencies'] ?? {}) as Record<string, string>) }
    for (const [dependency, range] of Object.entries(ranges)) expect(range, dependency).toBe(`^${workspaceVersion(name, dependency)}`)
  })

  it('ships the pages its README links to, and every link of every packed Markdown file resolves inside the package, down to the heading', () => {
    const root = unpack(tarball, mkdtempSync(join(unpacked, `${name}-`)))
    const pages = files.filter((f) => f.endsWith('.md'))
    const readme = readMarkdown(readFileSync(join(root, 'README.md'), 'utf8'))
    expect(readme.links.filter((l) => l.path.startsWith('docs/')).length).toBeGreaterThan(0)
    expect(files).toContain('docs/packaging.md')
    const broken: string[] = []
    const anchorsOf = new Map(pages.map((p) => [p, readMarkdown(readFileSync(join(root, p), 'utf8')).anchors]))
    for (const page of pages) {
      for (const link of readMarkdown(readFileSync(join(root, page), 'utf8')).links) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link.href)) continue
        const target = link.path === '' ? page : relativeTo(root, resolve(root, dirname(page), decodeURI(link.path)))
        if (target.startsWith('..') || !files.includes(target)) broken.push(`${page}: ${link.href} (no ${target} in the package)`)
        else if (link.fragment !== '' && target.endsWith('.md') && !anchorsOf.get(target)?.has(link.fragment))
          broken.push(`${page}: ${link.href} (no heading #${link.fragment} in ${target})`)
      }
    }
    expect(broken).toEqual([])
  })

  it('passes publint with no message at all', async () => {
    const data = readFileSync(tarball)
    const pack = { tarball: data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer }
    const { messages, pkg } = await publint({ pack, level: 'suggestion', strict: true })
    expect(messages.map((m) => formatMessage(m, pkg) ?? m.code)).toEqual([])
  })

  it('passes @arethetypeswrong/cli under the ESM-only profile', () => {
    // attw exits non-zero (execFileSync throws, printing its table) on a problem in a resolution
    // the profile checks; node10 and require() are outside the ESM-only profile.
    const out = execFileSync(attw, [tarball, '--profile', 'esm-only', '--format', 'table-flipped', '--no-color'], { encoding: 'utf8' })
    const rows = out.split('\n').filter((l) => l.includes('"@hands/'))
    expect(rows).toHaveLength(Object.keys(exports).length)
    for (const row of rows) expect(row).toMatch(/│ 🟢 \((ESM|JSON)\)\s+│ 🟢( \(JSON\))?\s+│/)
  })
})

it('the hands bin is dist/cli/main.js, executable, with a node shebang', () => {
  const manifest = tarballManifest(tarballs.surface)
  expect(manifest['bin']).toEqual({ hands: './dist/cli/main.js' })
  const listing = execFileSync('tar', ['-tvzf', tarballs.surface, 'package/dist/cli/main.js'], { encoding: 'utf8' })
  expect(listing).toMatch(/^-rwx/)
  const head = execFileSync('tar', ['-xzOf', tarballs.surface, 'package/dist/cli/main.js'], { encoding: 'utf8' }).split('\n')[0]
  expect(head).toBe('#!/usr/bin/env node')
})

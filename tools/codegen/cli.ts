/**
 * `pnpm gen`            write generated/ from packages/contracts
 * `pnpm gen --check`    exit 1 with a unified diff when generated/ differs from what codegen renders
 * `pnpm gen --diff REF` print how the surface changed since git REF's generated/surface.json
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createTwoFilesPatch } from 'diff'
import { diffSurfaces } from './diff.ts'
import { renderAll } from './files.ts'
import type { Surface } from './surface.ts'

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const OUT_OF_DATE = 'generated/ is out of date; run `pnpm gen`'

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => relative(REPO, join(e.parentPath, e.name)))
}

function check(): number {
  const files = renderAll()
  const expected = new Set(files.map((f) => f.path))
  let drift = 0
  for (const f of files) {
    const abs = join(REPO, f.path)
    const onDisk = existsSync(abs) ? readFileSync(abs, 'utf8') : ''
    if (onDisk !== f.text) {
      drift++
      process.stdout.write(createTwoFilesPatch(`a/${f.path}`, `b/${f.path}`, onDisk, f.text, 'committed', 'rendered'))
    }
  }
  for (const path of listFiles(join(REPO, 'generated'))) {
    if (!expected.has(path)) {
      drift++
      console.log(`${path}: not produced by codegen (stale file)`)
    }
  }
  if (drift > 0) {
    console.error(`${OUT_OF_DATE} (${drift} file${drift === 1 ? '' : 's'} differ)`)
    return 1
  }
  console.log(`generated/ is up to date (${files.length} files)`)
  return 0
}

function write(): number {
  const files = renderAll()
  const expected = new Set(files.map((f) => f.path))
  for (const path of listFiles(join(REPO, 'generated'))) if (!expected.has(path)) rmSync(join(REPO, path))
  for (const f of files) {
    const abs = join(REPO, f.path)
    mkdirSync(dirname(abs), { recursive: true })
    const before = existsSync(abs) ? readFileSync(abs, 'utf8') : null
    if (before !== f.text) writeFileSync(abs, f.text)
    console.log(`${before === f.text ? 'unchanged' : 'wrote    '} ${f.path}`)
  }
  return 0
}

function diffAgainst(ref: string): number {
  let text: string
  try {
    text = execFileSync('git', ['show', `${ref}:generated/surface.json`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (e) {
    const stderr = (e as { stderr?: string }).stderr?.trim() ?? String(e)
    console.error(`cannot read generated/surface.json at ${ref}: ${stderr}`)
    return 2
  }
  const before = JSON.parse(text) as Surface
  const surfaceFile = renderAll().find((f) => f.path === 'generated/surface.json')
  if (surfaceFile === undefined) throw new Error('codegen renders no surface.json')
  const after = JSON.parse(surfaceFile.text) as Surface
  console.log(diffSurfaces(before, after))
  return 0
}

function main(argv: string[]): number {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log('usage: pnpm gen [--check | --diff REF]')
    return 0
  }
  const d = argv.indexOf('--diff')
  if (d >= 0) {
    const ref = argv[d + 1]
    if (ref === undefined || ref.startsWith('-')) {
      console.error('--diff needs a git ref, e.g. `pnpm gen --diff main`')
      return 2
    }
    return diffAgainst(ref)
  }
  const unknown = argv.filter((a) => a !== '--check')
  if (unknown.length > 0) {
    console.error(`unknown argument ${unknown.join(' ')}; usage: pnpm gen [--check | --diff REF]`)
    return 2
  }
  return argv.includes('--check') ? check() : write()
}

process.exit(main(process.argv.slice(2)))

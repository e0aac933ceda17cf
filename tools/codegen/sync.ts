import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { createTwoFilesPatch } from 'diff'
import type { GeneratedFile } from './files.ts'

export const OUT_OF_DATE = 'generated/ is out of date; run `pnpm gen`'

function filesUnder(root: string, dir: string): string[] {
  const abs = join(root, dir)
  if (!existsSync(abs)) return []
  return readdirSync(abs, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .sort()
}

export interface CheckReport {
  /** Paths that differ from what codegen renders, are missing, or are stale. */
  drift: string[]
  /** Unified diffs and stale-file lines, ready to print. */
  report: string
}

/** Compare `root/generated` with rendered files without writing anything. */
export function checkGenerated(root: string, files: readonly GeneratedFile[]): CheckReport {
  const drift: string[] = []
  const parts: string[] = []
  for (const f of files) {
    const abs = join(root, f.path)
    const onDisk = existsSync(abs) ? readFileSync(abs, 'utf8') : null
    if (onDisk !== f.text) {
      drift.push(f.path)
      parts.push(createTwoFilesPatch(`a/${f.path}`, `b/${f.path}`, onDisk ?? '', f.text, onDisk === null ? 'missing' : 'committed', 'rendered'))
    }
  }
  const expected = new Set(files.map((f) => f.path))
  for (const path of filesUnder(root, 'generated')) {
    if (!expected.has(path)) {
      drift.push(path)
      parts.push(`${path}: not produced by codegen (stale file)\n`)
    }
  }
  return { drift, report: parts.join('') }
}

/** Write rendered files under `root`, removing stale ones; returns the paths that changed. */
export function writeGenerated(root: string, files: readonly GeneratedFile[]): string[] {
  const changed: string[] = []
  const expected = new Set(files.map((f) => f.path))
  for (const path of filesUnder(root, 'generated')) {
    if (!expected.has(path)) {
      rmSync(join(root, path))
      changed.push(path)
    }
  }
  for (const f of files) {
    const abs = join(root, f.path)
    const before = existsSync(abs) ? readFileSync(abs, 'utf8') : null
    if (before === f.text) continue
    mkdirSync(dirname(abs), { recursive: true })
    writeFileSync(abs, f.text)
    changed.push(f.path)
  }
  return changed
}

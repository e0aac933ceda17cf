/**
 * Each package reads floor by floor: each folder of its src/ imports only from the folders below
 * it (the package's README, "Layout"), and no module imports itself back through others, not even
 * by a type. A new arrow up or a cycle fails here with the import that makes it.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const PACKAGES = resolve(import.meta.dirname, '..', '..', 'packages')

/** Each package's floors, bottom to top: a folder of src/ or a file at its top. */
const FLOORS: Record<string, string[]> = {
  sandbox: ['env', 'cwd', 'tree', 'confine', 'effects', 'process', 'job', 'cli', 'index.ts', 'parts.ts'],
  'shell-runtime': ['errors.ts', 'limits', 'cwd', 'screen', 'output', 'process', 'shells', 'runtime', 'tools', 'create-shell-runtime.ts', 'index.ts'],
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )
}

/** Every relative module a file imports or re-exports, statically or dynamically, types included. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const found = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1] as string)
  return found.map((spec) => resolve(dirname(file), spec))
}

describe.each(Object.entries(FLOORS))('the layout of packages/%s/src', (name, floors) => {
  const src = join(PACKAGES, name, 'src')
  const floorOf = (file: string) => relative(src, file).split('/')[0] as string
  const files = sources(src)
  const edges = new Map(files.map((f) => [f, importsOf(f)]))

  it('names every folder and top file in its floors', () => {
    expect([...new Set(files.map(floorOf))].filter((f) => !floors.includes(f))).toEqual([])
  })

  it('has no import that runs up a floor or out of the package', () => {
    const up = files.flatMap((from) =>
      (edges.get(from) ?? [])
        .filter((to) => relative(src, to).startsWith('..') || floors.indexOf(floorOf(to)) > floors.indexOf(floorOf(from)))
        .map((to) => `${relative(src, from)} -> ${relative(src, to)}`),
    )
    expect(up).toEqual([])
  })

  it('has no cycle between modules, types included', () => {
    const cycles: string[] = []
    const state = new Map<string, 'open' | 'done'>()
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(src, f)).join(' -> '))
        return
      }
      state.set(file, 'open')
      for (const to of edges.get(file) ?? []) visit(to, [...path, file])
      state.set(file, 'done')
    }
    for (const f of files) visit(f, [])
    expect(cycles).toEqual([])
  })
})

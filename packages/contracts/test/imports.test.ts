import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const SRC = join(import.meta.dirname, '..', 'src')

function importsOf(file: string): string[] {
  const text = readFileSync(join(SRC, file), 'utf8')
  return [...text.matchAll(/(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)/g)].map(
    (m) => m[1] ?? m[2] ?? m[3] ?? '',
  )
}

const FORBIDDEN = /^(node:|fs$|fs\/|path$|child_process$|os$|node-pty$)/

describe('contracts imports', () => {
  const files = readdirSync(SRC).filter((f) => f.endsWith('.ts'))

  it('has source files to check', () => {
    expect(files.length).toBeGreaterThanOrEqual(10)
  })

  it('imports nothing from node:*, fs or node-pty, only typebox and its own files', () => {
    for (const f of files) {
      for (const spec of importsOf(f)) {
        expect(FORBIDDEN.test(spec), `${f} imports ${spec}`).toBe(false)
        expect(spec.startsWith('./') || spec === 'typebox' || spec.startsWith('typebox/'), `${f} imports ${spec}`).toBe(true)
      }
    }
  })

  it('detects a forbidden import when one is present', () => {
    expect(FORBIDDEN.test('node:fs')).toBe(true)
    expect(FORBIDDEN.test('node-pty')).toBe(true)
    expect(FORBIDDEN.test('typebox')).toBe(false)
  })
})

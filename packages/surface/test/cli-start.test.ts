import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'

/** Modules a source file loads when it is itself loaded: static value imports and re-exports (`import type` loads nothing). */
const STATIC_IMPORT = /^\s*(?:import|export)\s+(?!type\b)(?:[^'"]*?\bfrom\s+)?['"]([^'"]+)['"]/gm

/** Every package `file` loads before any of its code runs, following its own relative imports. */
function packagesLoadedBy(file: string, seen = new Set<string>(), packages = new Set<string>()): Set<string> {
  if (seen.has(file)) return packages
  seen.add(file)
  for (const [, specifier] of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
    if (specifier === undefined) continue
    if (specifier.startsWith('.')) packagesLoadedBy(join(dirname(file), specifier), seen, packages)
    else packages.add(specifier)
  }
  return packages
}

describe('hands CLI start-up', () => {
  it('loads only Node and the MCP SDK before a command runs: the tools, runtimes and tokenizer load when a command needs them', () => {
    const loaded = [...packagesLoadedBy(join(import.meta.dirname, '..', 'src', 'cli', 'main.ts'))]
    const heavy = loaded.filter((p) => !p.startsWith('node:') && !p.startsWith('@modelcontextprotocol/sdk/') && p !== '@hands/shell-runtime/limits')
    expect(heavy).toEqual([])
  })
})

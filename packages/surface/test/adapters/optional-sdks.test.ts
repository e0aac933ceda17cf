import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO } from '../helpers/mcp.ts'

const TSX = join(REPO, 'node_modules', '.bin', 'tsx')
const FIXTURES = join(import.meta.dirname, '..', 'fixtures')

function importEntries(withSdks: boolean): Record<string, string> {
  const hook = withSdks ? [] : ['--import', join(FIXTURES, 'deny-sdks.mjs')]
  const r = spawnSync(TSX, ['--conditions=hands-source', ...hook, join(FIXTURES, 'import-entries.ts')], {
    cwd: join(REPO, 'packages', 'surface'),
    encoding: 'utf8',
  })
  if (r.status !== 0) throw new Error(`import-entries exited ${r.status}: ${r.stderr}`)
  return JSON.parse(r.stdout) as Record<string, string>
}

describe('the SDKs are optional', () => {
  it('every entry point but ai-sdk loads when openai, @anthropic-ai/sdk and ai cannot be resolved', () => {
    const loaded = importEntries(false)
    expect(loaded).toEqual({
      '@hands/surface': 'ok',
      '@hands/surface/adapters': 'ok',
      '@hands/surface/openai': 'ok',
      '@hands/surface/openai-responses': 'ok',
      '@hands/surface/anthropic': 'ok',
      '@hands/surface/ai-sdk': expect.stringContaining('SDK not installed: ai'),
    })
  })

  it('with the SDKs installed, every entry point loads', () => {
    expect(Object.values(importEntries(true))).toEqual(Array(6).fill('ok'))
  })
})

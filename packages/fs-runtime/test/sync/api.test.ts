import { describe, expect, it } from 'vitest'
import type { ChunksModule, DirModule } from '../../src/sync/api.ts'
import * as chunks from '../../src/sync/chunks.js'
import * as dir from '../../src/sync/dir.js'

// The JavaScript the worker threads load has the types the TypeScript side gives it: these
// assignments fail `pnpm typecheck` (this package allows and checks JavaScript) when it does not.
const typed: [DirModule, ChunksModule] = [dir, chunks]

describe('sync/api', () => {
  it('the JavaScript modules export exactly what sync/api.ts declares, and sync/api.ts hands them on', async () => {
    const api = await import('../../src/sync/api.ts')
    const [d, c] = typed
    expect(Object.keys(d).sort()).toEqual(['O_PATH', 'closeRef', 'entryAt', 'errnoError', 'openChildSync', 'realOf', 'selfAt', 'verifySync'])
    expect(Object.keys(c).sort()).toEqual(['SMALL_FILE', 'copyChunk', 'listSync', 'readUmask', 'rmdirAt', 'unlinkChunk'])
    for (const name of ['entryAt', 'realOf', 'selfAt', 'verifySync', 'openChildSync', 'closeRef', 'O_PATH'] as const) expect(api[name]).toBe(d[name])
    for (const name of ['readUmask', 'copyChunk', 'unlinkChunk', 'listSync', 'rmdirAt'] as const) expect(api[name]).toBe(c[name])
  })
})

import { chmodSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { fileExists } from '@hands/contracts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeTree, refusal } from '../helpers/tree.ts'
import { makeWorld, valid, type World } from '../helpers/world.ts'

let w: World
beforeEach(() => {
  w = makeWorld()
})
afterEach(() => w.cleanup())

describe('file_exists', () => {
  it('answers each path in input order, echoing the paths as given', async () => {
    makeTree(w.root, ['a/b.txt', 'c/'])
    const r = valid(fileExists, await w.fs.file_exists({ paths: ['c', 'missing', './a/b.txt', join(w.root2, 'x')] }))
    expect(r.paths).toEqual([
      { path: 'c', is_exists: true },
      { path: 'missing', is_exists: false },
      { path: './a/b.txt', is_exists: true },
      { path: join(w.root2, 'x'), is_exists: false },
    ])
  })

  it('counts a symlink as itself, even a dangling one or one pointing outside', async () => {
    symlinkSync('nowhere', join(w.root, 'dangling'))
    symlinkSync(join(w.out, 'secret'), join(w.root, 'out-link'))
    const r = valid(fileExists, await w.fs.file_exists({ paths: ['dangling', 'out-link'] }))
    expect(r.paths.map((p) => p.is_exists)).toEqual([true, true])
  })

  it('refuses the whole call when one path is outside the roots, rather than answering false', async () => {
    const e = await refusal(w.fs.file_exists({ paths: ['ok', '../outside/secret'] }))
    expect(e.code).toBe('outside_roots')
    expect(e.message).toContain('paths[1]')
    expect(e.hint).toContain(w.root)
  })

  it('refuses a path through a symlink that leads outside', async () => {
    symlinkSync(w.out, join(w.root, 'link'))
    expect((await refusal(w.fs.file_exists({ paths: ['link/secret'] }))).code).toBe('outside_roots')
  })

  it('answers false for a path through a file, as lstat does', async () => {
    makeTree(w.root, ['f'])
    const r = await w.fs.file_exists({ paths: ['f/x', 'f/'] })
    expect(r.paths.map((p) => p.is_exists)).toEqual([false, false])
  })

  it('answers with a trailing slash whether a directory is there, following a final symlink', async () => {
    makeTree(w.root, ['d/', 'to-d => d', 'f', 'to-f => f'])
    const r = await w.fs.file_exists({ paths: ['to-d/', 'to-f/', 'd/.'] })
    expect(r.paths.map((p) => p.is_exists)).toEqual([true, false, true])
  })

  it('never reads content: an unreadable file still exists', async () => {
    makeTree(w.root, ['locked'])
    chmodSync(join(w.root, 'locked'), 0)
    expect((await w.fs.file_exists({ paths: ['locked'] })).paths[0]?.is_exists).toBe(true)
  })

  it('answers false for a path a gate hides and refuses one a gate denies', async () => {
    makeTree(w.root, ['hidden', 'denied'])
    const fs = w.with({ gates: [(p) => (p.endsWith('hidden') ? 'hide' : p.endsWith('denied') ? 'deny' : 'allow')] })
    expect((await fs.file_exists({ paths: ['hidden'] })).paths[0]?.is_exists).toBe(false)
    expect((await refusal(fs.file_exists({ paths: ['denied'] }))).code).toBe('access_denied')
  })

  it('rejects an input that breaks the schema with invalid_input naming the property', async () => {
    const e = await refusal(w.fs.file_exists({ paths: [] }))
    expect(e.code).toBe('invalid_input')
    expect(e.message).toContain('paths')
  })
})

import { lstatSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { createDirectory } from '@hands/contracts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeTree, present, refusal } from '../helpers/tree.ts'
import { makeWorld, valid, type World } from '../helpers/world.ts'

let w: World
beforeEach(() => {
  w = makeWorld()
})
afterEach(() => w.cleanup())

describe('create_directory', () => {
  it('makes a directory with all its missing parents', async () => {
    const r = valid(createDirectory, await w.fs.create_directory({ paths: ['a/b/c'] }))
    expect(r.paths).toEqual([{ path: 'a/b/c', is_created: true }])
    expect(lstatSync(join(w.root, 'a/b/c')).isDirectory()).toBe(true)
  })

  it('answers is_created false for a directory that already exists, and for a symlink to one', async () => {
    makeTree(w.root, ['d/', 'to-d => d'])
    const r = valid(createDirectory, await w.fs.create_directory({ paths: ['d', 'to-d', '.', w.root2] }))
    expect(r.paths.map((p) => p.is_created)).toEqual([false, false, false, false])
  })

  it('answers in input order, a repeated path created once', async () => {
    const r = await w.fs.create_directory({ paths: ['x/y', 'x', 'x/y'] })
    expect(r.paths).toEqual([
      { path: 'x/y', is_created: true },
      { path: 'x', is_created: false },
      { path: 'x/y', is_created: false },
    ])
  })

  it('refuses a path where a file exists with not_a_directory', async () => {
    makeTree(w.root, ['f'])
    const e = await refusal(w.fs.create_directory({ paths: ['f'] }))
    expect(e.code).toBe('not_a_directory')
    expect(e.message).toContain('"f"')
    expect((await refusal(w.fs.create_directory({ paths: ['f/sub'] }))).code).toBe('not_a_directory')
  })

  it('refuses to create through a dangling symlink', async () => {
    symlinkSync('missing-target', join(w.root, 'dangling'))
    expect((await refusal(w.fs.create_directory({ paths: ['dangling'] }))).code).toBe('not_a_directory')
    expect(present(join(w.root, 'missing-target'))).toBe(false)
  })

  it('refuses allowed/link -> outside, creating nothing outside', async () => {
    const before = w.sentinel()
    symlinkSync(w.out, join(w.root, 'link'))
    for (const p of ['link', 'link/a', 'link/a/b']) {
      expect((await refusal(w.fs.create_directory({ paths: [p] }))).code).toBe('outside_roots')
    }
    expect(present(join(w.out, 'a'))).toBe(false)
    expect(w.sentinel()).toBe(before)
  })

  it('validates the whole batch before creating anything', async () => {
    const e = await refusal(w.fs.create_directory({ paths: ['first', '../escape', 'third'] }))
    expect(e.code).toBe('outside_roots')
    expect(e.is_preflight).toBe(true)
    expect(present(join(w.root, 'first'))).toBe(false)
    expect(present(join(w.base, 'escape'))).toBe(false)
  })

  it('refuses a path a gate hides or denies with access_denied', async () => {
    const fs = w.with({ gates: [(p, access) => (p.includes('secret') && access === 'write' ? 'hide' : 'allow')] })
    expect((await refusal(fs.create_directory({ paths: ['secret/dir'] }))).code).toBe('access_denied')
    expect(present(join(w.root, 'secret'))).toBe(false)
  })
})

import { lstatSync, readFileSync, readlinkSync, rmSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { move } from '@hands/contracts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createFsRuntime, type ConfirmRequest } from '../../src/index.ts'
import { listTree, makeTree, otherDevice, present, refusal } from '../helpers/tree.ts'
import { makeWorld, valid, type World } from '../helpers/world.ts'

let w: World
beforeEach(() => {
  w = makeWorld()
})
afterEach(() => w.cleanup())

describe('move', () => {
  it('renames a file, creating missing parents of dest', async () => {
    makeTree(w.root, ['a'])
    const r = valid(move, await w.fs.move({ src: 'a', dest: 'x/y/b' }))
    expect(r).toEqual({ src: 'a', dest: 'x/y/b' })
    expect(listTree(w.root)).toEqual({ x: 'dir', 'x/y': 'dir', 'x/y/b': 'file:a' })
  })

  it('moves a directory with everything in it', async () => {
    makeTree(w.root, ['d/a', 'd/sub/b', 'd/l => sub/b'])
    await w.fs.move({ src: 'd', dest: 'e' })
    expect(listTree(w.root)).toEqual({ e: 'dir', 'e/a': 'file:d/a', 'e/l': 'link:sub/b', 'e/sub': 'dir', 'e/sub/b': 'file:d/sub/b' })
  })

  it('moves a final symlink itself, its text unchanged, even one pointing outside', async () => {
    makeTree(w.root, ['target'])
    symlinkSync('target', join(w.root, 'link'))
    symlinkSync(join(w.out, 'secret'), join(w.root, 'out-link'))
    const before = w.sentinel()
    await w.fs.move({ src: 'link', dest: 'link2' })
    await w.fs.move({ src: 'out-link', dest: 'out-link2' })
    expect(readlinkSync(join(w.root, 'link2'))).toBe('target')
    expect(readlinkSync(join(w.root, 'out-link2'))).toBe(join(w.out, 'secret'))
    expect(present(join(w.root, 'link')) || present(join(w.root, 'out-link'))).toBe(false)
    expect(w.sentinel()).toBe(before)
  })

  it('refuses an existing dest, checked with lstat, even a dangling symlink', async () => {
    makeTree(w.root, ['a', 'b'])
    symlinkSync('nowhere', join(w.root, 'dangling'))
    for (const dest of ['b', 'dangling']) {
      const e = await refusal(w.fs.move({ src: 'a', dest }))
      expect(e.code).toBe('destination_exists')
    }
    expect(readFileSync(join(w.root, 'a'), 'utf8')).toBe('a')
    expect(readFileSync(join(w.root, 'b'), 'utf8')).toBe('b')
  })

  it('refuses a directory onto an existing empty directory, which rename alone would replace', async () => {
    makeTree(w.root, ['d/f', 'empty/'])
    expect((await refusal(w.fs.move({ src: 'd', dest: 'empty' }))).code).toBe('destination_exists')
    expect(present(join(w.root, 'd/f'))).toBe(true)
  })

  it('replaces dest whole with is_overwrite after the host confirms', async () => {
    makeTree(w.root, ['d/new', 'e/old', 'f', 'g'])
    const asked: ConfirmRequest[] = []
    const fs = w.with({ confirm: (req) => (asked.push(req), true) })
    await fs.move({ src: 'd', dest: 'e', is_overwrite: true })
    await fs.move({ src: 'f', dest: 'g', is_overwrite: true })
    expect(asked.map((a) => [a.action, a.paths])).toEqual([
      ['overwrite', [join(w.root, 'e')]],
      ['overwrite', [join(w.root, 'g')]],
    ])
    expect(listTree(w.root)).toEqual({ e: 'dir', 'e/new': 'file:d/new', g: 'file:f' })
  })

  it('leaves both paths as they were when the host declines the overwrite', async () => {
    makeTree(w.root, ['a', 'b'])
    expect((await refusal(w.with({ confirm: () => false }).move({ src: 'a', dest: 'b', is_overwrite: true }))).code).toBe('not_confirmed')
    expect(listTree(w.root)).toEqual({ a: 'file:a', b: 'file:b' })
  })

  it('refuses to move a directory into itself', async () => {
    makeTree(w.root, ['d/x/'])
    for (const dest of ['d/x/inner', 'd', 'd/new']) expect((await refusal(w.fs.move({ src: 'd', dest }))).code).toBe('into_itself')
    expect(listTree(w.root)).toEqual({ d: 'dir', 'd/x': 'dir' })
  })

  it('refuses to move an allowed root or onto one', async () => {
    makeTree(w.root, ['a'])
    expect((await refusal(w.fs.move({ src: '.', dest: 'x' }))).code).toBe('protected_path')
    expect((await refusal(w.fs.move({ src: 'a', dest: w.root2, is_overwrite: true }))).code).toBe('protected_path')
  })

  it('refuses a missing src with not_found and an outside path with outside_roots', async () => {
    makeTree(w.root, ['a'])
    const before = w.sentinel()
    expect((await refusal(w.fs.move({ src: 'nope', dest: 'x' }))).code).toBe('not_found')
    expect((await refusal(w.fs.move({ src: join(w.out, 'secret'), dest: 'x' }))).code).toBe('outside_roots')
    expect((await refusal(w.fs.move({ src: 'a', dest: join(w.out, 'a') }))).code).toBe('outside_roots')
    expect(w.sentinel()).toBe(before)
    expect(present(join(w.root, 'a'))).toBe(true)
  })

  it('moves across filesystems by copying, then removing the source once the copy is complete', async () => {
    const other = otherDevice(w.base)
    if (other === null) return
    try {
      makeTree(w.root, ['tree/a', 'tree/sub/b', 'tree/l => sub/b', 'file', 'flink => file'])
      const fs = createFsRuntime({ roots: [w.root, other] })
      await fs.move({ src: 'tree', dest: join(other, 'tree') })
      await fs.move({ src: 'file', dest: join(other, 'file') })
      await fs.move({ src: 'flink', dest: join(other, 'flink') })
      expect(listTree(other)).toEqual({
        file: 'file:file',
        flink: 'link:file',
        tree: 'dir',
        'tree/a': 'file:tree/a',
        'tree/l': 'link:sub/b',
        'tree/sub': 'dir',
        'tree/sub/b': 'file:tree/sub/b',
      })
      expect(listTree(w.root)).toEqual({})
    } finally {
      rmSync(other, { recursive: true, force: true })
    }
  })

  it('moves across filesystems over an existing dest when overwriting', async () => {
    const other = otherDevice(w.base)
    if (other === null) return
    try {
      makeTree(w.root, ['d/new'])
      makeTree(other, ['d/old'])
      const fs = createFsRuntime({ roots: [w.root, other] })
      await fs.move({ src: 'd', dest: join(other, 'd'), is_overwrite: true })
      expect(listTree(other)).toEqual({ d: 'dir', 'd/new': 'file:d/new' })
      expect(present(join(w.root, 'd'))).toBe(false)
    } finally {
      rmSync(other, { recursive: true, force: true })
    }
  })

  it('refuses a directory holding a path a gate protects', async () => {
    makeTree(w.root, ['d/.env', 'd/ok'])
    const fs = w.with({ gates: [(p) => (p.endsWith('.env') ? 'deny' : 'allow')] })
    expect((await refusal(fs.move({ src: 'd', dest: 'e' }))).code).toBe('access_denied')
    expect(lstatSync(join(w.root, 'd/.env')).isFile()).toBe(true)
  })
})

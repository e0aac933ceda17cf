import { linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createFsRuntime } from '../../src/index.ts'
import { setPinning } from '../../src/handle/dir.ts'
import { makeTree, otherDevice } from '../helpers/tree.ts'
import { makeWorld, type World } from '../helpers/world.ts'

let w: World
beforeEach(() => {
  w = makeWorld()
})
afterEach(() => {
  setPinning(true)
  w.cleanup()
})

/** What must not change about the file outside: its inode at that path, content, size, mode and mtime. */
function outsideState(path: string): string {
  const st = statSync(path, { bigint: true })
  return JSON.stringify({ ino: String(st.ino), size: String(st.size), mode: String(st.mode), mtime: String(st.mtimeNs), content: readFileSync(path, 'base64') })
}

/**
 * A hard link inside the root, at `inside` (relative to the root), to the file `outside/secret`
 * — made before the runtime acts, as a link a person made earlier would be.
 */
function linkOut(inside: string): { outside: string; before: string } {
  const outside = join(w.out, 'secret')
  mkdirSync(dirname(join(w.root, inside)), { recursive: true })
  linkSync(outside, join(w.root, inside))
  expect(statSync(join(w.root, inside)).ino).toBe(statSync(outside).ino)
  return { outside, before: outsideState(outside) }
}

describe.each([
  ['pinned', true],
  ['unpinned', false],
])('a hard link inside a root to a file outside (%s)', (_mode, pinned) => {
  beforeEach(() => setPinning(pinned))

  it('copy with is_overwrite onto it replaces the entry and never writes the outside inode', async () => {
    const { outside, before } = linkOut('linked')
    makeTree(w.root, ['new-content'])
    await w.fs.copy({ src: 'new-content', dest: 'linked', is_overwrite: true })
    expect(readFileSync(join(w.root, 'linked'), 'utf8')).toBe('new-content')
    expect(statSync(join(w.root, 'linked')).ino).not.toBe(statSync(outside).ino)
    expect(outsideState(outside)).toBe(before)
  })

  it('copy with is_overwrite of a larger and of a sparse file onto it leaves the outside inode as it was', async () => {
    const { outside, before } = linkOut('linked')
    writeFileSync(join(w.root, 'big'), Buffer.alloc(3 * 1024 * 1024, 7))
    makeTree(w.root, ['holes ~8388608'])
    await w.fs.copy({ src: 'big', dest: 'linked', is_overwrite: true })
    expect(statSync(join(w.root, 'linked')).size).toBe(3 * 1024 * 1024)
    linkOut('linked2')
    await w.fs.copy({ src: 'holes', dest: 'linked2', is_overwrite: true })
    expect(statSync(join(w.root, 'linked2')).size).toBe(8388608)
    expect(outsideState(outside)).toBe(before)
  })

  it('copy with is_overwrite of a tree onto a directory holding it leaves the outside inode as it was', async () => {
    const { outside, before } = linkOut('d/linked')
    makeTree(w.root, ['src/linked', 'src/other'])
    await w.fs.copy({ src: 'src', dest: 'd', is_overwrite: true })
    expect(readFileSync(join(w.root, 'd/linked'), 'utf8')).toBe('src/linked')
    expect(outsideState(outside)).toBe(before)
  })

  it('move with is_overwrite onto it replaces the entry and never writes the outside inode', async () => {
    const { outside, before } = linkOut('linked')
    makeTree(w.root, ['moving'])
    await w.fs.move({ src: 'moving', dest: 'linked', is_overwrite: true })
    expect(readFileSync(join(w.root, 'linked'), 'utf8')).toBe('moving')
    expect(outsideState(outside)).toBe(before)
  })

  it('move across filesystems with is_overwrite onto it replaces the entry and never writes the outside inode', async () => {
    const other = otherDevice(w.base)
    if (other === null) return
    try {
      const { outside, before } = linkOut('linked')
      makeTree(other, ['far', 'far-tree/a'])
      const fs = createFsRuntime({ roots: [w.root, other] })
      await fs.move({ src: join(other, 'far'), dest: 'linked', is_overwrite: true })
      expect(readFileSync(join(w.root, 'linked'), 'utf8')).toBe('far')
      linkOut('tree/a')
      await fs.move({ src: join(other, 'far-tree'), dest: 'tree', is_overwrite: true })
      expect(readFileSync(join(w.root, 'tree/a'), 'utf8')).toBe('far-tree/a')
      expect(outsideState(outside)).toBe(before)
    } finally {
      rmSync(other, { recursive: true, force: true })
    }
  })

  it('copying, moving and deleting the link itself leave the outside inode as it was', async () => {
    const { outside, before } = linkOut('linked')
    await w.fs.copy({ src: 'linked', dest: 'copied' })
    expect(statSync(join(w.root, 'copied')).ino).not.toBe(statSync(outside).ino)
    await w.fs.move({ src: 'linked', dest: 'moved' })
    await w.fs.delete({ paths: ['moved', 'copied'] })
    expect(outsideState(outside)).toBe(before)
  })
})

import { lstatSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { deleteTool } from '@hands/contracts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createFsRuntime, type ConfirmRequest } from '../../src/index.ts'
import { listTree, makeTree, present, refusal } from '../helpers/tree.ts'
import { makeWorld, valid, type World } from '../helpers/world.ts'

let w: World
beforeEach(() => {
  w = makeWorld()
})
afterEach(() => w.cleanup())

describe('delete', () => {
  it('removes files and whole directories, answering in input order', async () => {
    makeTree(w.root, ['f', 'd/a/b/c', 'd/x', 'keep'])
    const r = valid(deleteTool, await w.fs.delete({ paths: ['d', 'f'] }))
    expect(r.paths).toEqual([
      { path: 'd', is_deleted: true },
      { path: 'f', is_deleted: true },
    ])
    expect(listTree(w.root)).toEqual({ keep: 'file:keep' })
  })

  it('answers is_deleted false for a missing path instead of failing', async () => {
    const r = valid(deleteTool, await w.fs.delete({ paths: ['nothing-here', 'no/such/dir'] }))
    expect(r.paths.map((p) => p.is_deleted)).toEqual([false, false])
  })

  it('answers is_deleted false for a path already removed with its parent earlier in the batch', async () => {
    makeTree(w.root, ['d/inner'])
    const r = await w.fs.delete({ paths: ['d', 'd/inner'] })
    expect(r.paths.map((p) => p.is_deleted)).toEqual([true, false])
  })

  it('removes a final symlink itself, never its target', async () => {
    makeTree(w.root, ['target/file', 'link => target'])
    symlinkSync(w.out, join(w.root, 'out-link'))
    const before = w.sentinel()
    await w.fs.delete({ paths: ['link', 'out-link'] })
    expect(listTree(w.root)).toEqual({ target: 'dir', 'target/file': 'file:target/file' })
    expect(w.sentinel()).toBe(before)
  })

  it('removes symlinks inside a directory without following them out', async () => {
    mkdirSync(join(w.root, 'd'))
    symlinkSync(w.out, join(w.root, 'd/escape'))
    symlinkSync(join(w.out, 'secret'), join(w.root, 'd/secret-link'))
    const before = w.sentinel()
    await w.fs.delete({ paths: ['d'] })
    expect(present(join(w.root, 'd'))).toBe(false)
    expect(w.sentinel()).toBe(before)
    expect(readFileSync(join(w.out, 'secret'), 'utf8')).toBe('secret')
  })

  it('refuses to delete an allowed root, or a directory holding one, with protected_path', async () => {
    for (const p of ['.', w.root2, './', 'sub/..']) {
      const e = await refusal(w.fs.delete({ paths: [p] }))
      expect(e.code).toBe('protected_path')
    }
    makeTree(w.root, ['holder/inner-root/'])
    const nested = createFsRuntime({ roots: [w.root, join(w.root, 'holder/inner-root')] })
    const e = await refusal(nested.delete({ paths: ['holder'] }))
    expect(e.code).toBe('protected_path')
    expect(e.message).toContain('contains the allowed root')
    expect(present(join(w.root, 'holder/inner-root'))).toBe(true)
  })

  it('refuses the whole batch when one path is outside, removing nothing', async () => {
    makeTree(w.root, ['a', 'b'])
    const e = await refusal(w.fs.delete({ paths: ['a', '../outside/secret', 'b'] }))
    expect(e.code).toBe('outside_roots')
    expect(e.is_preflight).toBe(true)
    expect(Object.keys(listTree(w.root))).toEqual(['a', 'b'])
  })

  it('asks the confirmation hook with the real paths at stake and removes nothing when it declines', async () => {
    makeTree(w.root, ['a', 'd/x'])
    const asked: ConfirmRequest[] = []
    const fs = w.with({
      confirm: (req) => {
        asked.push(req)
        return false
      },
    })
    const e = await refusal(fs.delete({ paths: ['a', 'missing', 'd'] }))
    expect(e.code).toBe('not_confirmed')
    expect(e.is_preflight).toBe(true)
    expect(asked).toEqual([
      {
        tool: 'delete',
        action: 'delete',
        paths: [join(w.root, 'a'), join(w.root, 'd')],
        targets: [
          { path: join(w.root, 'a'), kind: 'file', files: 1, bytes: 1 },
          { path: join(w.root, 'd'), kind: 'directory', files: 1, bytes: 3 },
        ],
      },
    ])
    expect(Object.keys(listTree(w.root))).toEqual(['a', 'd', 'd/x'])
  })

  it('tells the hook what each path is and what a directory holds, counting symlinks without following them', async () => {
    makeTree(w.root, ['tree/one', 'tree/sub/two', 'tree/sub/deeper/three', 'tree/empty/', 'tree/out => /etc', 'tree/self => ../tree', 'link => tree'])
    const asked: ConfirmRequest[] = []
    const fs = w.with({
      confirm: (req) => {
        asked.push(req)
        return { declined: 'the test said no' }
      },
    })
    const e = await refusal(fs.delete({ paths: ['tree', 'link'] }))
    expect(e.message).toBe('Not confirmed to delete "tree", "link": the test said no; delete changed nothing.')
    expect(asked[0]?.targets).toEqual([
      // one, sub/two, sub/deeper/three and the two symlinks: 5 entries; bytes of the three files only.
      { path: join(w.root, 'tree'), kind: 'directory', files: 5, bytes: 'tree/one'.length + 'tree/sub/two'.length + 'tree/sub/deeper/three'.length },
      { path: join(w.root, 'link'), kind: 'symlink', files: 1, bytes: 0 },
    ])
  })

  it('deletes once the confirmation hook agrees, and counts a throwing hook as declining', async () => {
    makeTree(w.root, ['a'])
    expect(
      (
        await refusal(
          w
            .with({
              confirm: () => {
                throw new Error('no')
              },
            })
            .delete({ paths: ['a'] }),
        )
      ).code,
    ).toBe('not_confirmed')
    const r = await w.with({ confirm: async () => true }).delete({ paths: ['a'] })
    expect(r.paths[0]?.is_deleted).toBe(true)
  })

  it('refuses a directory holding a path a gate protects, removing nothing', async () => {
    makeTree(w.root, ['d/ok', 'd/sub/.env'])
    const fs = w.with({ gates: [(p) => (p.endsWith('.env') ? 'hide' : 'allow')] })
    const e = await refusal(fs.delete({ paths: ['d'] }))
    expect(e.code).toBe('access_denied')
    expect(e.message).not.toContain('.env')
    expect(present(join(w.root, 'd/ok'))).toBe(true)
  })

  it('treats a path a gate hides as missing', async () => {
    makeTree(w.root, ['.env'])
    const fs = w.with({ gates: [(p) => (p.endsWith('.env') ? 'hide' : 'allow')] })
    expect((await fs.delete({ paths: ['.env'] })).paths[0]?.is_deleted).toBe(false)
    expect(lstatSync(join(w.root, '.env')).isFile()).toBe(true)
  })
})

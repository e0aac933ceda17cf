import { mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import type { ToolError } from '@hands/contracts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { resolveInside, type FsRuntime } from '../../src/index.ts'
import { makeTree, refusal } from '../helpers/tree.ts'
import { makeWorld, type World } from '../helpers/world.ts'

let w: World
beforeEach(() => {
  w = makeWorld()
})
afterEach(() => w.cleanup())

/** Every way a tool takes one path, with the other arguments inside the roots. */
const ONE_PATH: Array<[string, (fs: FsRuntime, path: string) => Promise<unknown>]> = [
  ['file_exists', (fs, p) => fs.file_exists({ paths: [p] })],
  ['create_directory', (fs, p) => fs.create_directory({ paths: [p] })],
  ['delete', (fs, p) => fs.delete({ paths: [p] })],
  ['copy src', (fs, p) => fs.copy({ src: p, dest: 'copied' })],
  ['copy dest', (fs, p) => fs.copy({ src: 'here', dest: p })],
  ['move src', (fs, p) => fs.move({ src: p, dest: 'moved' })],
  ['move dest', (fs, p) => fs.move({ src: 'here', dest: p })],
]

/** The error text a model reads. */
const text = (e: ToolError) => `${e.message}\n${e.hint}`

describe('refusals name the path as given and the root it left, never where it leads outside', () => {
  // A distinctive outside target: a program-like file and a directory beside the sentinel.
  const layout = (out: string) => {
    makeTree(out, ['usr/bin/vim.basic', 'usr/share/secret-place/x'])
    makeTree(w.root, ['here'])
    symlinkSync(join(out, 'usr/bin/vim.basic'), join(w.root, 'vim'))
    symlinkSync(join(out, 'usr/share/secret-place'), join(w.root, 'place'))
    symlinkSync('../outside/usr/share/secret-place', join(w.root, 'rel'))
  }

  it('for a symlink to an outside file used as a directory (vim/x), in every fs tool and resolveInside', async () => {
    layout(w.out)
    for (const [how, call] of ONE_PATH) {
      const e = await refusal(call(w.fs, 'vim/x'))
      expect(e.code, how).toBe('outside_roots')
      expect(e.message, how).toContain('"vim/x"')
      expect(e.message, how).toContain(w.root)
      expect(text(e), how).not.toContain('vim.basic')
      expect(text(e), how).not.toContain(w.out)
    }
    const e = await refusal(resolveInside(w.fs.roots, 'vim/x'))
    expect(text(e)).not.toContain('vim.basic')
  })

  it('for a symlink to an outside directory, absolute or relative, existing or not below it', async () => {
    layout(w.out)
    for (const path of ['place/x', 'place/missing/deeper', 'rel/x', join(w.root, 'place/x'), 'place']) {
      for (const [how, call] of ONE_PATH) {
        // `place` itself is a symlink inside: only the tools that follow a final symlink refuse it.
        if (path === 'place' && how !== 'create_directory' && how !== 'copy src') continue
        const e = await refusal(call(w.fs, path))
        expect(e.code, `${how} ${path}`).toBe('outside_roots')
        expect(e.message, `${how} ${path}`).toContain(JSON.stringify(path))
        expect(text(e), `${how} ${path}`).not.toContain('secret-place')
        expect(text(e), `${how} ${path}`).not.toContain(w.out)
      }
    }
  })

  it('for /proc/self/cwd, without revealing the working directory of the server', async () => {
    makeTree(w.root, ['here'])
    for (const [how, call] of ONE_PATH) {
      const e = await refusal(call(w.fs, '/proc/self/cwd/x'))
      expect(e.code, how).toBe('outside_roots')
      expect(e.message, how).toContain('"/proc/self/cwd/x"')
      expect(text(e), how).not.toContain(process.cwd())
    }
    const e = await refusal(resolveInside(w.fs.roots, '/proc/self/cwd'))
    expect(text(e)).not.toContain(process.cwd())
  })

  it('for a copied symlink whose target leads outside, naming the link and not its target', async () => {
    layout(w.out)
    makeTree(w.root, ['tree/ok'])
    symlinkSync(join(w.out, 'usr/share/secret-place'), join(w.root, 'tree/out'))
    for (const src of ['place', 'tree']) {
      // `place` is itself a symlink: copy copies it as a link, and refuses since it leads outside.
      const e = await refusal(w.fs.copy({ src, dest: `${src}-copy` }))
      expect(e.code).toBe('outside_roots')
      expect(e.message).toContain(src === 'tree' ? '"tree/out"' : '"place"')
      expect(text(e)).not.toContain('secret-place')
      expect(text(e)).not.toContain(w.out)
    }
  })

  it('says the root a path left, and that a path never under a root is outside them', async () => {
    layout(w.out)
    mkdirSync(join(w.root2, 'sub'))
    symlinkSync(join(w.out, 'usr'), join(w.root2, 'sub/away'))
    const left = await refusal(w.fs.file_exists({ paths: [join(w.root2, 'sub/away/share')] }))
    expect(left.message).toContain(w.root2)
    expect(text(left)).not.toContain(join(w.out, 'usr'))
    const never = await refusal(w.fs.file_exists({ paths: ['/etc/hostname'] }))
    expect(never.message).toContain('"/etc/hostname"')
    expect(never.message).not.toContain(w.root)
  })
})

describe('a call with several paths outside the roots names every one of them, in input order', () => {
  /** Each given path appears in the message, in this order. */
  const expectInOrder = (e: ToolError, paths: readonly string[]) => {
    expect(e.code).toBe('outside_roots')
    let from = 0
    for (const p of paths) {
      const at = e.message.indexOf(JSON.stringify(p), from)
      expect(at, `${JSON.stringify(p)} after position ${from} in: ${e.message}`).toBeGreaterThanOrEqual(0)
      from = at + JSON.stringify(p).length
    }
  }

  beforeEach(() => {
    makeTree(w.root, ['here', 'd/'])
    symlinkSync(join(w.out, 'dir'), join(w.root, 'away'))
  })

  // The first refused path takes the slow resolution (a missing parent); a later one the fast one.
  const outside = () => ['nope/../../outside/secret', join(w.out, 'secret'), 'away/inner', '../ROOTx/secret']

  it('file_exists', async () => {
    const paths = ['here', ...outside().slice(0, 2), 'd', ...outside().slice(2)]
    const e = await refusal(w.fs.file_exists({ paths }))
    expectInOrder(e, outside())
    expect(e.message).not.toContain('"here"')
    expect(e.message).toContain('paths[1]')
    expect(e.message).toContain('paths[5]')
  })

  it('create_directory', async () => {
    const e = await refusal(w.fs.create_directory({ paths: ['new', ...outside()] }))
    expectInOrder(e, outside())
    expect(e.message).not.toContain('"new"')
  })

  it('delete', async () => {
    const e = await refusal(w.fs.delete({ paths: [...outside(), 'here'] }))
    expectInOrder(e, outside())
    expect(e.message).not.toContain('"here"')
  })

  it('copy and move, src before dest', async () => {
    for (const call of [w.fs.copy.bind(w.fs), w.fs.move.bind(w.fs)]) {
      const e = await refusal(call({ src: 'away/inner', dest: 'nope/../../outside/new' }))
      expectInOrder(e, ['away/inner', 'nope/../../outside/new'])
      expect(e.message).toMatch(/src .*dest/)
    }
  })

  it('names every outside path even when another path of the call has a different problem', async () => {
    const gated = w.with({ gates: [(p) => (p.endsWith('/here') ? 'deny' : 'allow')] })
    const e = await refusal(gated.delete({ paths: ['here', ...outside()] }))
    expectInOrder(e, outside())
  })
})

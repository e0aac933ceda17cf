import { chmodSync, lstatSync, mkdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { copy } from '@hands/contracts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ConfirmRequest } from '../../src/index.ts'
import { listTree, makeTree, present, refusal } from '../helpers/tree.ts'
import { makeWorld, valid, type World } from '../helpers/world.ts'

let w: World
beforeEach(() => {
  w = makeWorld()
})
afterEach(() => w.cleanup())

describe('copy', () => {
  it('copies a file, creating missing parents of dest, and echoes the paths as given', async () => {
    makeTree(w.root, ['a.txt'])
    const r = valid(copy, await w.fs.copy({ src: './a.txt', dest: 'new/dir/b.txt' }))
    expect(r).toEqual({ src: './a.txt', dest: 'new/dir/b.txt' })
    expect(readFileSync(join(w.root, 'new/dir/b.txt'), 'utf8')).toBe('a.txt')
  })

  it('keeps the permission bits of a file', async () => {
    makeTree(w.root, ['run.sh'])
    chmodSync(join(w.root, 'run.sh'), 0o751)
    await w.fs.copy({ src: 'run.sh', dest: 'run2.sh' })
    expect(statSync(join(w.root, 'run2.sh')).mode & 0o777).toBe(0o751)
  })

  it('copies a directory tree recursively, keeping relative symlinks relative and their text unchanged', async () => {
    makeTree(w.root, ['src/a', 'src/sub/b', 'src/sub/deeper/c', 'src/empty/', 'src/rel => sub/b', 'src/sub/up => ../a', 'src/dangling => nope'])
    await w.fs.copy({ src: 'src', dest: 'dst' })
    const all = listTree(w.root)
    const copied = Object.fromEntries(
      Object.entries(all)
        .filter(([k]) => k.startsWith('dst'))
        .map(([k, v]) => [k.replace(/^dst/, 'src'), v]),
    )
    const original = Object.fromEntries(Object.entries(all).filter(([k]) => k.startsWith('src')))
    expect(copied).toEqual(Object.fromEntries(Object.entries(original).map(([k, v]) => [k, v])))
    expect(readlinkSync(join(w.root, 'dst/rel'))).toBe('sub/b')
    expect(readlinkSync(join(w.root, 'dst/sub/up'))).toBe('../a')
  })

  it('copies a final symlink as a symlink with its text unchanged', async () => {
    makeTree(w.root, ['file', 'link => file'])
    await w.fs.copy({ src: 'link', dest: 'link2' })
    expect(lstatSync(join(w.root, 'link2')).isSymbolicLink()).toBe(true)
    expect(readlinkSync(join(w.root, 'link2'))).toBe('file')
  })

  it('refuses to copy a symlink whose target resolves outside the roots', async () => {
    symlinkSync(join(w.out, 'secret'), join(w.root, 'out-link'))
    symlinkSync('../outside/secret', join(w.root, 'rel-out'))
    for (const src of ['out-link', 'rel-out']) {
      const e = await refusal(w.fs.copy({ src, dest: `${src}-copy` }))
      expect(e.code).toBe('outside_roots')
      expect(present(join(w.root, `${src}-copy`))).toBe(false)
    }
  })

  it('refuses a tree holding a symlink that would lead outside from the copy, copying nothing', async () => {
    makeTree(w.root, ['deep/a/b/f', 'deep/a/b/up => ../../../f'])
    // From deep/a/b the link reaches ROOT/f; from the copy at c it would reach the root's parent.
    const e = await refusal(w.fs.copy({ src: 'deep/a', dest: 'c' }))
    expect(e.code).toBe('outside_roots')
    expect(e.is_preflight).toBe(true)
    expect(e.message).toContain('deep/a/b/up')
    expect(present(join(w.root, 'c'))).toBe(false)
  })

  it('refuses a symlink chain in a tree that escapes only once the copied links exist, removing the copy', async () => {
    // In the copy, `top` points at the root itself, so `via/..` climbs out of the root.
    makeTree(w.root, ['a/b/src/top => ../..', 'a/b/src/via => top/../outside'])
    mkdirSync(join(w.root, 'x'))
    const e = await refusal(w.fs.copy({ src: 'a/b/src', dest: 'x/y' }))
    expect(e.code).toBe('outside_roots')
    expect(e.is_preflight).toBe(false)
    expect(e.message).toContain('removed')
    expect(present(join(w.root, 'x/y'))).toBe(false)
    expect(present(join(w.root, 'x'))).toBe(true)
  })

  it('refuses an existing dest with destination_exists unless is_overwrite', async () => {
    makeTree(w.root, ['a', 'b'])
    const e = await refusal(w.fs.copy({ src: 'a', dest: 'b' }))
    expect(e.code).toBe('destination_exists')
    expect(e.message).toContain('"b"')
    expect(e.hint).toContain('is_overwrite')
    expect(readFileSync(join(w.root, 'b'), 'utf8')).toBe('b')
  })

  it('counts a dangling symlink at dest as existing and never writes through it', async () => {
    makeTree(w.root, ['a'])
    symlinkSync(join(w.out, 'planted'), join(w.root, 'b'))
    expect((await refusal(w.fs.copy({ src: 'a', dest: 'b' }))).code).toBe('destination_exists')
    await w.fs.copy({ src: 'a', dest: 'b', is_overwrite: true })
    expect(lstatSync(join(w.root, 'b')).isFile()).toBe(true)
    expect(present(join(w.out, 'planted'))).toBe(false)
  })

  it('replaces dest whole with is_overwrite after the host confirms, never merging directories', async () => {
    makeTree(w.root, ['src/new', 'dst/old', 'dst/sub/older'])
    const asked: ConfirmRequest[] = []
    const fs = w.with({ confirm: (req) => (asked.push(req), true) })
    await fs.copy({ src: 'src', dest: 'dst', is_overwrite: true })
    expect(asked).toEqual([
      {
        tool: 'copy',
        action: 'overwrite',
        paths: [join(w.root, 'dst')],
        targets: [{ path: join(w.root, 'dst'), kind: 'directory', files: 2, bytes: 'dst/old'.length + 'dst/sub/older'.length }],
      },
    ])
    expect(Object.keys(listTree(join(w.root, 'dst')))).toEqual(['new'])
    expect(Object.keys(listTree(w.root)).filter((k) => k.includes('hands-'))).toEqual([])
  })

  it('replaces a file with a directory and a directory with a file when overwriting', async () => {
    makeTree(w.root, ['f', 'd/x', 'g'])
    await w.fs.copy({ src: 'd', dest: 'f', is_overwrite: true })
    expect(lstatSync(join(w.root, 'f')).isDirectory()).toBe(true)
    await w.fs.copy({ src: 'g', dest: 'd', is_overwrite: true })
    expect(readFileSync(join(w.root, 'd'), 'utf8')).toBe('g')
  })

  it('replaces a file with a tree holding relative symlinks, judging each link where it will stand', async () => {
    makeTree(w.root, ['f', 'd/x', 'd/sub/y'])
    symlinkSync('x', join(w.root, 'd/l'))
    symlinkSync('../x', join(w.root, 'd/sub/up'))
    valid(copy, await w.fs.copy({ src: 'd', dest: 'f', is_overwrite: true }))
    expect(readlinkSync(join(w.root, 'f/l'))).toBe('x')
    expect(readFileSync(join(w.root, 'f/sub/up'), 'utf8')).toBe('d/x')
    // A link that would leave the roots from there is still refused, and the file stays.
    makeTree(w.root, ['g', 'e/z'])
    symlinkSync('../../../../../../../../etc/passwd', join(w.root, 'e/out'))
    const e = await refusal(w.fs.copy({ src: 'e', dest: 'g', is_overwrite: true }))
    expect(e.code).toBe('outside_roots')
    expect(readFileSync(join(w.root, 'g'), 'utf8')).toBe('g')
  })

  it('leaves dest untouched when the host declines the overwrite', async () => {
    makeTree(w.root, ['a', 'b'])
    const e = await refusal(w.with({ confirm: () => false }).copy({ src: 'a', dest: 'b', is_overwrite: true }))
    expect(e.code).toBe('not_confirmed')
    expect(readFileSync(join(w.root, 'b'), 'utf8')).toBe('b')
  })

  it('refuses to copy a directory into itself', async () => {
    makeTree(w.root, ['d/x'])
    for (const dest of ['d/inside', 'd/./new/deeper/still', 'd']) {
      const e = await refusal(w.fs.copy({ src: 'd', dest }))
      expect(e.code).toBe('into_itself')
    }
    expect(Object.keys(listTree(join(w.root, 'd')))).toEqual(['x'])
  })

  it('refuses to overwrite a directory that holds src', async () => {
    makeTree(w.root, ['d/sub/f'])
    expect((await refusal(w.fs.copy({ src: 'd/sub', dest: 'd', is_overwrite: true }))).code).toBe('into_itself')
  })

  it('refuses src and dest that are the same path', async () => {
    makeTree(w.root, ['a'])
    expect((await refusal(w.fs.copy({ src: 'a', dest: './a', is_overwrite: true }))).code).toBe('invalid_input')
  })

  it('refuses a missing src with not_found', async () => {
    const e = await refusal(w.fs.copy({ src: 'nope', dest: 'x' }))
    expect(e.code).toBe('not_found')
    expect(e.message).toContain('"nope"')
  })

  it('refuses to replace an allowed root', async () => {
    makeTree(w.root, ['a'])
    expect((await refusal(w.fs.copy({ src: 'a', dest: w.root2, is_overwrite: true }))).code).toBe('protected_path')
  })

  it('copies between roots', async () => {
    makeTree(w.root, ['d/f'])
    await w.fs.copy({ src: 'd', dest: join(w.root2, 'd') })
    expect(readFileSync(join(w.root2, 'd/f'), 'utf8')).toBe('d/f')
  })

  it('refuses a src or dest outside the roots with outside_roots, touching nothing', async () => {
    makeTree(w.root, ['a'])
    const before = w.sentinel()
    expect((await refusal(w.fs.copy({ src: join(w.out, 'secret'), dest: 'stolen' }))).code).toBe('outside_roots')
    expect((await refusal(w.fs.copy({ src: 'a', dest: '../outside/planted' }))).code).toBe('outside_roots')
    expect(present(join(w.root, 'stolen'))).toBe(false)
    expect(w.sentinel()).toBe(before)
  })

  it('refuses a dest ending in a slash when src is a file', async () => {
    makeTree(w.root, ['a'])
    expect((await refusal(w.fs.copy({ src: 'a', dest: 'newdir/' }))).code).toBe('not_a_directory')
  })

  it('leaves out entries a gate hides and refuses a src a gate denies', async () => {
    makeTree(w.root, ['d/keep', 'd/.env', 'secret.txt'])
    const fs = w.with({ gates: [(p) => (p.endsWith('.env') ? 'hide' : p.endsWith('secret.txt') ? 'deny' : 'allow')] })
    await fs.copy({ src: 'd', dest: 'e' })
    expect(Object.keys(listTree(join(w.root, 'e')))).toEqual(['keep'])
    expect((await refusal(fs.copy({ src: 'secret.txt', dest: 's2' }))).code).toBe('access_denied')
    expect((await refusal(fs.copy({ src: 'd/.env', dest: 'env2' }))).code).toBe('not_found')
  })

  it('refuses to copy a FIFO', async () => {
    makeTree(w.root, ['d/'])
    const { execFileSync } = await import('node:child_process')
    execFileSync('mkfifo', [join(w.root, 'd/pipe')])
    expect((await refusal(w.fs.copy({ src: 'd', dest: 'e' }))).code).toBe('invalid_input')
    expect(present(join(w.root, 'e'))).toBe(false)
  })

  it('copies a large file byte for byte', async () => {
    const data = Buffer.alloc(3 * 1024 * 1024 + 17, 7)
    writeFileSync(join(w.root, 'big'), data)
    await w.fs.copy({ src: 'big', dest: 'big2' })
    expect(readFileSync(join(w.root, 'big2')).equals(data)).toBe(true)
  })
})

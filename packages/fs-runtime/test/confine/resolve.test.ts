import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { resolveInside, type PathGate } from '../../src/index.ts'
import { makeTree, refusal, tempDir, type Temp } from '../helpers/tree.ts'

let temp: Temp
let root: string
let root2: string
let out: string

beforeEach(() => {
  temp = tempDir()
  root = join(temp.path, 'ROOT')
  root2 = join(temp.path, 'ROOT2')
  out = join(temp.path, 'outside')
  for (const d of [root, root2, out]) mkdirSync(d)
  writeFileSync(join(out, 'secret'), 'secret')
})
afterEach(() => temp.cleanup())

describe('resolveInside', () => {
  it('resolves a relative path against the workspace root', async () => {
    makeTree(root, ['a/b/'])
    expect(await resolveInside([root], 'a/b')).toBe(join(root, 'a/b'))
  })

  it('appends the missing rest of a path to the real path of its deepest existing ancestor', async () => {
    makeTree(root, ['a/', 'link => a'])
    expect(await resolveInside([root], 'link/new/deeper')).toBe(join(root, 'a/new/deeper'))
  })

  it('accepts an absolute path inside the second root', async () => {
    expect(await resolveInside([root, root2], join(root2, 'x'))).toBe(join(root2, 'x'))
  })

  it('resolves the roots themselves through symlinks', async () => {
    symlinkSync(root, join(temp.path, 'root-link'))
    expect(await resolveInside([join(temp.path, 'root-link')], 'x')).toBe(join(root, 'x'))
  })

  it('refuses a path that climbs out with .. and names the roots in the hint', async () => {
    const e = await refusal(resolveInside([root], '../outside/secret'))
    expect(e.code).toBe('outside_roots')
    expect(e.is_preflight).toBe(true)
    expect(e.message).toContain('../outside/secret')
    expect(e.hint).toContain(root)
  })

  it('refuses a sibling whose name merely starts with the root name', async () => {
    mkdirSync(join(temp.path, 'ROOT-old'))
    const e = await refusal(resolveInside([root], join(temp.path, 'ROOT-old', 'x')))
    expect(e.code).toBe('outside_roots')
    expect((await refusal(resolveInside([root], '../ROOT-old'))).code).toBe('outside_roots')
  })

  it('refuses a symlinked parent that leads outside, for existing and not-yet-existing targets', async () => {
    symlinkSync(out, join(root, 'link'))
    expect((await refusal(resolveInside([root], 'link/secret'))).code).toBe('outside_roots')
    expect((await refusal(resolveInside([root], 'link/not-yet/deeper'))).code).toBe('outside_roots')
  })

  it('refuses a dangling symlink whose target would be outside', async () => {
    symlinkSync(join(out, 'missing'), join(root, 'dangling'))
    const e = await refusal(resolveInside([root], 'dangling'))
    expect(e.code).toBe('outside_roots')
    expect(e.message).toContain('"dangling"')
    expect(e.message).toContain(root)
    expect(e.message).not.toContain(join(out, 'missing'))
  })

  it('accepts a symlink that leaves the root and comes back in, judging only where it lands', async () => {
    makeTree(root, ['target/'])
    symlinkSync(join(root, 'target'), join(out, 'back'))
    symlinkSync(join(out, 'back'), join(root, 'via-outside'))
    expect(await resolveInside([root], 'via-outside/f')).toBe(join(root, 'target/f'))
  })

  it('resolves .. after a symlink from the link target, as the kernel does', async () => {
    makeTree(root, ['b/c/', 'a => b/c'])
    expect(await resolveInside([root], 'a/../target')).toBe(join(root, 'b/target'))
  })

  it('rejects a NUL byte with invalid_input before touching the filesystem', async () => {
    const e = await refusal(resolveInside([root], 'a\0/../../outside'))
    expect(e.code).toBe('invalid_input')
    expect(e.is_preflight).toBe(true)
  })

  it('keeps %2e%2e as a literal name', async () => {
    expect(await resolveInside([root], '%2e%2e/x')).toBe(join(root, '%2e%2e/x'))
  })

  it('reports a symlink loop as not_found', async () => {
    makeTree(root, ['a => b', 'b => a'])
    const e = await refusal(resolveInside([root], 'a/x'))
    expect(e.code).toBe('not_found')
    expect(e.message).toContain('symbolic links')
  })

  it('reports a file used as a directory as not_a_directory', async () => {
    makeTree(root, ['f'])
    expect((await refusal(resolveInside([root], 'f/x'))).code).toBe('not_a_directory')
    expect((await refusal(resolveInside([root], 'f/'))).code).toBe('not_a_directory')
  })

  it('reports an outside file used as a directory as outside_roots, saying nothing about it', async () => {
    const e = await refusal(resolveInside([root], join(out, 'secret', 'x')))
    expect(e.code).toBe('outside_roots')
  })

  it('passes the real path, the access and the tool to every gate', async () => {
    makeTree(root, ['real/', 'link => real'])
    const seen: unknown[] = []
    const gate: PathGate = (path, access, tool) => {
      seen.push([path, access, tool])
      return 'allow'
    }
    await resolveInside([root], 'link/x', { gates: [gate], access: 'cwd', tool: 'shell_run' })
    expect(seen).toEqual([[join(root, 'real/x'), 'cwd', 'shell_run']])
  })

  it('refuses with access_denied when a gate hides, denies or throws', async () => {
    for (const gate of [
      () => 'hide' as const,
      () => 'deny' as const,
      () => {
        throw new Error('boom')
      },
      async () => 'maybe' as never,
    ]) {
      const e = await refusal(resolveInside([root], 'x', { gates: [gate] }))
      expect(e.code).toBe('access_denied')
      expect(e.message).toContain('"x"')
    }
  })

  it('rejects roots that do not exist', async () => {
    await expect(resolveInside([join(temp.path, 'nope')], 'x')).rejects.toThrow(/must exist/)
  })
})

import { rmSync } from 'node:fs'
import { ToolError } from '@hands/contracts'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isWithin, resolveInside } from '../../src/index.ts'
import { hashTree, makeTree } from '../helpers/tree.ts'
import { makeWorld, type World } from '../helpers/world.ts'

let w: World
beforeAll(() => {
  w = makeWorld()
})
afterAll(() => w.cleanup())

const FIXTURE = [
  'a/b/file',
  'a/c/',
  'file',
  'in-link => a',
  'abs-in-link => $ROOT/a/b',
  'out-link => $OUT',
  'out-file-link => $OUT/secret',
  'up => ..',
  'dangling-out => $OUT/nope',
  'dangling-in => a/nope',
  'loop => loop',
]

/** Path segments: traversal, names that exist, links in and out, names of outside things. */
const segment = fc.constantFrom(
  '..',
  '.',
  '',
  'a',
  'b',
  'c',
  'file',
  'new',
  'in-link',
  'abs-in-link',
  'out-link',
  'out-file-link',
  'up',
  'dangling-out',
  'dangling-in',
  'loop',
  'outside',
  'ROOT',
  'ROOT2',
  'ROOT-old',
  'secret',
  'dir',
)
const prefix = fc.constantFrom('', '', './', '$ROOT/', '$BASE/', '$OUT/', '/', '$ROOT2/')
const suffix = fc.constantFrom('', '', '/', '/.', '/..')
const pathArb = fc
  .tuple(prefix, fc.array(segment, { minLength: 1, maxLength: 6 }), suffix)
  .map(([p, segs, s]) => `${p}${segs.join('/')}${s}`)
  .filter((p) => p.length > 0)

type Call = 'file_exists' | 'create_directory' | 'delete' | 'copy_from' | 'copy_to' | 'move_from' | 'move_to' | 'resolve'
const callArb = fc.constantFrom<Call>('file_exists', 'create_directory', 'delete', 'copy_from', 'copy_to', 'move_from', 'move_to', 'resolve')

function rebuild(): void {
  for (const root of [w.root, w.root2]) rmSync(root, { recursive: true, force: true })
  makeTree(w.root, FIXTURE, { $ROOT: w.root, $OUT: w.out })
  makeTree(w.root2, ['r2file'])
}

async function run(call: Call, path: string): Promise<void> {
  const fs = w.fs
  switch (call) {
    case 'file_exists':
      await fs.file_exists({ paths: [path] })
      return
    case 'create_directory':
      await fs.create_directory({ paths: [path] })
      return
    case 'delete':
      await fs.delete({ paths: [path] })
      return
    case 'copy_from':
      await fs.copy({ src: path, dest: 'copied' })
      return
    case 'copy_to':
      await fs.copy({ src: 'a', dest: path, is_overwrite: true })
      return
    case 'move_from':
      await fs.move({ src: path, dest: 'moved' })
      return
    case 'move_to':
      await fs.move({ src: 'file', dest: path, is_overwrite: true })
      return
    case 'resolve': {
      const real = await resolveInside(fs.roots, path)
      expect(
        fs.roots.some((root) => isWithin(root, real)),
        `${path} resolved to ${real}`,
      ).toBe(true)
    }
  }
}

describe('property: random paths stay inside the roots or are refused', () => {
  it('never touches the sentinel tree outside, for any tool and any path built from .., ., names, links in and out, absolute prefixes and trailing slashes', async () => {
    const before = w.sentinel()
    let refused = 0
    let acted = 0
    await fc.assert(
      fc.asyncProperty(callArb, pathArb, async (call, raw) => {
        rebuild()
        const path = raw.replaceAll('$ROOT2', w.root2).replaceAll('$ROOT', w.root).replaceAll('$BASE', w.base).replaceAll('$OUT', w.out)
        try {
          await run(call, path)
          acted++
        } catch (e) {
          if (!(e instanceof ToolError)) throw e
          refused++
          // A refusal before acting changes nothing at all.
          if (e.is_preflight) expect(e.code).not.toBe('internal')
        }
        expect(w.sentinel(), `${call}(${JSON.stringify(path)}) touched the outside`).toBe(before)
      }),
      { numRuns: 1500 },
    )
    expect(acted).toBeGreaterThan(100)
    expect(refused).toBeGreaterThan(100)
    console.info(`property: ${acted} calls acted, ${refused} refused, sentinel untouched`)
  }, 240_000)

  it('leaves the roots untouched when a call is refused before acting', async () => {
    await fc.assert(
      fc.asyncProperty(callArb, pathArb, async (call, raw) => {
        rebuild()
        const path = raw.replaceAll('$ROOT2', w.root2).replaceAll('$ROOT', w.root).replaceAll('$BASE', w.base).replaceAll('$OUT', w.out)
        const roots = () => `${hashTree(w.root)}:${hashTree(w.root2)}`
        const before = roots()
        try {
          await run(call, path)
        } catch (e) {
          if (!(e instanceof ToolError)) throw e
          if (e.is_preflight) expect(roots(), `${call}(${JSON.stringify(path)}) refused with ${e.code} yet changed a root`).toBe(before)
        }
      }),
      { numRuns: 500 },
    )
  }, 240_000)
})

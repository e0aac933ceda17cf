import { lstatSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { copy, createDirectory, deleteTool, fileExists, move, ToolError } from '@hands/contracts'
import { describe, expect, it } from 'vitest'
import { resolveInside, type FsRuntime } from '../../src/index.ts'
import { hashTree, makeTree, present } from '../helpers/tree.ts'
import { makeWorld, valid, type World } from '../helpers/world.ts'
import { CASES, ROLES, type ContainmentCase, type Outcome, type Role } from './cases.ts'

/** What each kind of case means for each role, before a case's own overrides. */
function expected(c: ContainmentCase, role: Role): Outcome {
  const own = c.roles?.[role]
  if (own !== undefined) return own
  if (c.expect === 'outside') return 'outside_roots'
  if (c.expect === 'invalid') return 'invalid_input'
  const isLink = c.ltarget !== undefined
  const isLinkOut = c.expect === 'link-out'
  switch (role) {
    case 'file_exists':
      return 'exists'
    case 'create_directory':
      return isLinkOut ? 'outside_roots' : 'created'
    case 'delete':
      return isLink ? 'link-gone' : 'target-gone'
    case 'copy_from':
      return isLinkOut ? 'outside_roots' : isLink ? 'link' : 'content'
    case 'copy_to':
      return isLink ? 'destination_exists' : 'created'
    case 'move_from':
      return isLink ? 'link' : 'content'
    case 'move_to':
      return isLink ? 'destination_exists' : 'created'
  }
}

function substitute(text: string, w: World): string {
  return text.replaceAll('$ROOT', w.root).replaceAll('$OUT', w.out).replaceAll('$BASE', w.base)
}

const READING: ReadonlySet<Role> = new Set(['file_exists', 'delete', 'copy_from', 'move_from'])

function setUp(c: ContainmentCase, role: Role | null): World {
  const w = makeWorld()
  const vars = { $ROOT: w.root, $OUT: w.out, $BASE: w.base }
  makeTree(w.base, c.outsideFs ?? [], vars)
  makeTree(w.root, c.fs ?? [], vars)
  if (role !== null && READING.has(role) && c.expect === 'inside' && c.target !== undefined && c.prepare !== false) {
    const at = join(w.root, c.target)
    mkdirSync(dirname(at), { recursive: true })
    writeFileSync(at, 'TARGET')
  }
  if (role === 'copy_to' || role === 'move_to') writeFileSync(join(w.root, '__src'), 'SRC')
  return w
}

/** Run the role and describe what happened as an Outcome, asserting the effect it claims. */
async function act(c: ContainmentCase, role: Role, w: World): Promise<Outcome> {
  const fs: FsRuntime = w.fs
  const open = substitute(c.open, w)
  const target = c.target === undefined ? null : join(w.root, c.target)
  const link = c.ltarget === undefined ? null : join(w.root, c.ltarget)
  switch (role) {
    case 'file_exists': {
      const r = valid(fileExists, await fs.file_exists({ paths: [open] }))
      return r.paths[0]?.is_exists === true ? 'exists' : 'absent'
    }
    case 'create_directory': {
      const r = valid(createDirectory, await fs.create_directory({ paths: [open] }))
      if (r.paths[0]?.is_created !== true) return 'already'
      expect(target !== null && lstatSync(target).isDirectory()).toBe(true)
      return 'created'
    }
    case 'delete': {
      const r = valid(deleteTool, await fs.delete({ paths: [open] }))
      if (r.paths[0]?.is_deleted !== true) return 'none'
      if (link !== null) {
        expect(present(link)).toBe(false)
        if (target !== null && c.prepare !== false) expect(readFileSync(target, 'utf8')).toBe('TARGET')
        return 'link-gone'
      }
      expect(target !== null && !present(target)).toBe(true)
      return 'target-gone'
    }
    case 'copy_from': {
      const r = valid(copy, await fs.copy({ src: open, dest: 'copied' }))
      expect(r).toEqual({ src: open, dest: 'copied' })
      const st = lstatSync(join(w.root, 'copied'))
      if (st.isSymbolicLink()) {
        expect(link !== null && readlinkSync(join(w.root, 'copied')) === readlinkSync(link)).toBe(true)
        return 'link'
      }
      if (st.isDirectory()) return 'dir'
      expect(readFileSync(join(w.root, 'copied'), 'utf8')).toBe('TARGET')
      return 'content'
    }
    case 'copy_to': {
      valid(copy, await fs.copy({ src: '__src', dest: open }))
      expect(target !== null && readFileSync(target, 'utf8') === 'SRC').toBe(true)
      return 'created'
    }
    case 'move_from': {
      valid(move, await fs.move({ src: open, dest: 'moved' }))
      const st = lstatSync(join(w.root, 'moved'))
      if (st.isSymbolicLink()) {
        expect(link !== null && !present(link)).toBe(true)
        return 'link'
      }
      if (st.isDirectory()) return 'dir'
      expect(readFileSync(join(w.root, 'moved'), 'utf8')).toBe('TARGET')
      expect(target !== null && !present(target)).toBe(true)
      return 'content'
    }
    case 'move_to': {
      valid(move, await fs.move({ src: '__src', dest: open }))
      expect(target !== null && readFileSync(target, 'utf8') === 'SRC').toBe(true)
      expect(present(join(w.root, '__src'))).toBe(false)
      return 'created'
    }
  }
}

const ERROR_OUTCOMES = new Set<Outcome>(['outside_roots', 'invalid_input', 'not_found', 'not_a_directory', 'destination_exists'])

/** Run the whole table: every case against the seven tool roles and resolveInside. */
export function runTable(title: string, cases: readonly ContainmentCase[] = CASES): void {
  describe(title, () => {
    it('has the cases the issue asks for', () => {
      expect(cases.length).toBeGreaterThanOrEqual(60)
      expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length)
      expect(cases.filter((c) => c.expect === 'outside' || c.expect === 'link-out').length).toBeGreaterThanOrEqual(25)
    })

    for (const c of cases) {
      describe(`${c.from}: ${c.name} (${JSON.stringify(c.open).slice(0, 60)})`, () => {
        for (const role of ROLES) {
          const want = expected(c, role)
          it(`${role} → ${want}`, async () => {
            const w = setUp(c, role)
            try {
              const sentinel = w.sentinel()
              const rootBefore = hashTree(w.root)
              let got: Outcome
              try {
                got = await act(c, role, w)
              } catch (e) {
                if (!(e instanceof ToolError)) throw e
                got = e.code as Outcome
                expect(ERROR_OUTCOMES.has(got), `${e.code}: ${e.message}`).toBe(true)
                expect(e.is_preflight, e.message).toBe(true)
                expect(hashTree(w.root), 'a refused call changed the root').toBe(rootBefore)
              }
              expect(got).toBe(want)
              expect(w.sentinel(), 'the sentinel outside the roots changed').toBe(sentinel)
            } finally {
              w.cleanup()
            }
          }, 120_000)
        }
        const wantResolve =
          c.expect === 'inside' ? (c.name === 'symlink cycle' ? 'not_found' : 'inside') : c.expect === 'invalid' ? 'invalid_input' : 'outside_roots'
        it(`resolveInside (shell cwd) → ${wantResolve}`, async () => {
          const w = setUp(c, null)
          try {
            const sentinel = w.sentinel()
            let got: string
            try {
              const real = await resolveInside(w.fs.roots, substitute(c.open, w))
              got = 'inside'
              if (c.target !== undefined) expect(real).toBe(join(w.root, c.target))
            } catch (e) {
              if (!(e instanceof ToolError)) throw e
              got = e.code
            }
            expect(got).toBe(wantResolve)
            expect(w.sentinel()).toBe(sentinel)
          } finally {
            w.cleanup()
          }
        })
      })
    }
  })
}

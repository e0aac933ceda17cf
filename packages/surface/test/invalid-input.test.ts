import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TOOLS, type ToolName } from '@hands/contracts'
import { createSurface, type Session } from '@hands/surface'
import { mutationsOf } from '@hands/test-contracts/arbitrary'
import { tempRoot } from './helpers/tmp.ts'

let root: ReturnType<typeof tempRoot>
let session: Session

/** Valid inputs whose effects would be visible: files appear, vanish or move; processes start. */
function baseInputs(dir: string): Record<ToolName, Record<string, unknown>> {
  return {
    shell_run: { commands: [`touch ${join(dir, 'ran-shell_run')}`], cwd: dir },
    shell_background: { commands: [`touch ${join(dir, 'ran-shell_background')}`, 'sleep 60'], id: 'bg', cwd: dir },
    shell_logs: { id: 'bg', n: 10 },
    shell_type: { id: 'bg', text: 'x', is_enter: true },
    shell_stop: { id: 'bg' },
    copy: { src: 'victim.txt', dest: 'copied.txt', is_overwrite: false },
    move: { src: 'victim.txt', dest: 'moved.txt', is_overwrite: false },
    delete: { paths: ['victim.txt', 'victim-dir'] },
    create_directory: { paths: ['made', 'made/deeper'] },
    file_exists: { paths: ['victim.txt'] },
  }
}

/** Every file under the root with its contents: the state no rejected call may change. */
function snapshot(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((e) => {
      const p = join(e.parentPath, e.name)
      return `${p}:${e.isFile() ? readFileSync(p, 'utf8') : e.isDirectory() ? 'dir' : 'other'}`
    })
    .sort()
    .join('\n')
}

/** Children of this test process (a runtime that spawned would show one). */
function childPids(): number[] {
  const out: number[] = []
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === process.pid) out.push(Number(e))
    } catch {
      // Exited while we looked.
    }
  }
  return out
}

beforeAll(() => {
  root = tempRoot()
  writeFileSync(join(root.dir, 'victim.txt'), 'keep me')
  mkdirSync(join(root.dir, 'victim-dir'))
  session = createSurface({ roots: [root.dir] })
})
afterAll(async () => {
  await session.close()
  root.remove()
})

describe('invalid input never reaches a runtime', () => {
  for (const t of TOOLS) {
    it(`${t.name}: every generated invalid input returns invalid_input naming the property, and nothing changes`, async () => {
      const base = baseInputs(root.dir)[t.name]
      const schema = JSON.parse(JSON.stringify(t.input))
      const props = Object.keys(schema.properties)
      const mutation = fc.oneof(
        fc.constantFrom(...mutationsOf(schema)).map((m) => ({ property: m.property, input: m.apply(base) })),
        fc
          .string({ minLength: 1, maxLength: 12 })
          .filter((k) => !props.includes(k) && k !== '__proto__')
          .map((k) => ({ property: k, input: { ...base, [k]: 1 } })),
        fc
          .constantFrom(...props)
          .chain((p) => fc.jsonValue().map((v) => ({ property: p, input: { ...base, [p]: v } })))
          .filter(
            ({ property, input }) => typeof input[property] !== typeof base[property] || Array.isArray(base[property]) !== Array.isArray(input[property]),
          ),
      )
      const before = snapshot(root.dir)
      const childrenBefore = childPids().length
      await fc.assert(
        fc.asyncProperty(mutation, async ({ property, input }) => {
          const outcome = await session.call(t.name, input)
          expect(outcome.ok).toBe(false)
          if (!outcome.ok) {
            expect(outcome.error.code, JSON.stringify({ input, error: outcome.error })).toBe('invalid_input')
            expect(outcome.error.is_preflight).toBe(true)
            expect(outcome.error.message.includes(`\`${property}`) || outcome.error.message.includes(property), outcome.error.message).toBe(true)
          }
        }),
        { numRuns: 150 },
      )
      expect(snapshot(root.dir)).toBe(before)
      expect(session.resources()).toEqual([])
      expect(childPids().length).toBe(childrenBefore)
    })
  }
})

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { toolCost } from '@hands/surface/adapters'
import { diffSurfaces, formatDiff, wordDiff, type Surface } from '@hands/surface/contract'
import { contract } from '../../src/cli/contract.ts'
import { tempRoot } from '../helpers/tmp.ts'
import { FIXTURE_PAIRS, base, tool } from './fixtures.ts'

const root = tempRoot('hands-contract-diff-')
afterAll(root.remove)

/** Write a surface to a file in the temp dir. */
function file(name: string, surface: Surface): string {
  const path = join(root.dir, `${name}.json`)
  writeFileSync(path, JSON.stringify(surface, null, 2))
  return path
}

/** `hands contract diff` in process: exit code and printed text. */
function run(...argv: string[]): { code: number; out: string } {
  let out = ''
  const code = contract(['diff', ...argv], { out: (t) => void (out += t), err: (t) => void (out += t) })
  return { code, out }
}

function pair(p: (typeof FIXTURE_PAIRS)[number]): [string, string] {
  const before = base()
  p.before?.(before)
  const after = structuredClone(before)
  p.after(after)
  const slug = p.kind.replace(/\W+/g, '-')
  return [file(`${slug}-a`, before), file(`${slug}-b`, after)]
}

const lines = (text: string) => text.split('\n').map((l) => l.trim())

describe('wordDiff', () => {
  it('marks words removed and added in git word-diff notation', () => {
    expect(wordDiff('kill the tree', 'stop the whole tree')).toBe('[-kill-]{+stop+} the {+whole +}tree')
  })
})

describe('hands contract diff on fixture pairs', () => {
  it('exits 0 and says "no surface change" for an unchanged pair, with or without --exit-code', () => {
    const a = file('same-a', base())
    const b = file('same-b', base())
    for (const flags of [[], ['--exit-code']]) {
      const r = run(a, b, ...flags)
      expect(r.code).toBe(0)
      expect(lines(r.out)).toContain('no surface change')
    }
    expect(run(a, b, '--format', 'md').out).toContain('**No surface change.**')
  })

  for (const p of FIXTURE_PAIRS) {
    it(`shows a change of ${p.kind} and fails --exit-code on it`, () => {
      const [a, b] = pair(p)
      const text = run(a, b, '--exit-code')
      expect(text.code).toBe(1)
      const shown = lines(text.out)
      for (const want of p.text) {
        if (typeof want === 'string') expect(shown, text.out).toContain(want)
        else
          expect(
            shown.some((l) => want.test(l)),
            `${want} in\n${text.out}`,
          ).toBe(true)
      }
      const md = run(a, b, '--format', 'md', '--exit-code')
      expect(md.code).toBe(1)
      for (const want of p.md) expect(md.out, md.out).toContain(want)
      // Without --exit-code a difference is still a successful run.
      expect(run(a, b).code).toBe(0)
    })
  }

  it('counts the tokens of each changed tool and of all tools, before and after', () => {
    const before = base()
    const after = structuredClone(before)
    const stop = tool(after, 'shell_stop')
    stop.description = `${stop.description} It also removes the shell's log file from the session directory.`
    const was = toolCost(tool(before, 'shell_stop')).tokens
    const now = toolCost(stop).tokens
    const total = (s: Surface) => s.tools.reduce((n, t) => n + toolCost(t).tokens, 0)
    expect(now).toBeGreaterThan(was)
    const out = run(file('tokens-a', before), file('tokens-b', after)).out
    expect(lines(out)).toContain(`~ tool shell_stop · tokens ${was} → ${now} (+${now - was})`)
    expect(out).toContain(`tool tokens ${total(before)} → ${total(after)} (+${total(after) - total(before)})`)
    const md = run(file('tokens-a', before), file('tokens-b', after), '--format', 'md').out
    expect(md).toContain(`| \`shell_stop\` | changed | ${was} → ${now} (+${now - was}) |`)
    expect(md).toContain(`| **all tools** | | **${total(before)} → ${total(after)} (+${total(after) - total(before)})** |`)
  })

  it('prints the whole diff as JSON with --format json', () => {
    const [a, b] = pair(FIXTURE_PAIRS.find((p) => p.kind === 'maxItems 100 → 200')!)
    const out = JSON.parse(run(a, b, '--format', 'json').out) as ReturnType<typeof diffSurfaces>
    expect(out.isChanged).toBe(true)
    expect(out.tools).toEqual([
      {
        name: 'delete',
        status: 'changed',
        changes: [{ path: 'input paths.maxItems', kind: 'changed', before: 100, after: 200, isProse: false }],
        tokens: expect.any(Object),
      },
    ])
  })

  it('compares an older surface file without effects or prompt prose, and says what it could not compare', () => {
    const old = base() as Partial<Surface> & Surface
    delete old.prompt
    for (const t of old.tools) delete t.effect
    const diff = diffSurfaces(old, base())
    expect(diff.isChanged).toBe(false)
    expect(diff.notes).toEqual([
      'the old surface records no effects; effects not compared (annotations are)',
      'the old surface records no prompt prose; prompt not compared',
    ])
    expect(formatDiff(diff, 'text', { before: 'a', after: 'b' })).toContain('note: the old surface records no prompt prose')
  })

  it('refuses bad usage with exit 2 semantics (a UsageError) and names what is allowed', () => {
    expect(() => run()).toThrow(/contract diff takes A and optionally B/)
    expect(() => contract(['show', 'x'])).toThrow(/contract takes the subcommand diff, got "show"/)
    expect(() => run('a.json', 'b.json', '--format', 'html')).toThrow(/--format takes text, md, json, got "html"/)
  })
})

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

  it('does not repeat a change to a tool’s own description under "no code tool" when that tool has no other description there', () => {
    const before = base()
    const after = structuredClone(before)
    tool(after, 'copy').description = tool(after, 'copy').description.replace('Copy', 'Duplicate')
    const diff = diffSurfaces(before, after)
    expect(diff.tools.map((t) => [t.name, t.changes.map((c) => c.path)])).toEqual([['copy', ['description']]])
    expect(diff.tools[0]?.tokensNoCodeTool).toEqual(diff.tools[0]?.tokens)
  })

  it('counts the tools and the prompt prose without a code tool in the total line', () => {
    const before = base()
    const after = structuredClone(before)
    after.no_code_tool!.descriptions['shell_run'] = `${after.no_code_tool!.descriptions['shell_run']} Read each command's exit before the next call.`
    const cost = (s: Surface) => s.tools.reduce((n, t) => n + toolCost({ ...t, description: s.no_code_tool!.descriptions[t.name] ?? t.description }).tokens, 0)
    const out = run(file('variant-a', before), file('variant-b', after)).out
    expect(cost(after)).toBeGreaterThan(cost(before))
    expect(out).toMatch(
      new RegExp(
        `; without a code tool: tool tokens ${cost(before)} → ${cost(after)} \\(\\+${cost(after) - cost(before)}\\), prompt prose \\d+ \\(±0\\)$`,
        'm',
      ),
    )
    const md = run(file('variant-a', before), file('variant-b', after), '--format', 'md').out
    expect(md).toContain(`| **all tools, without a code tool** | | **${cost(before)} → ${cost(after)} (+${cost(after) - cost(before)})** |`)
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
        tokensNoCodeTool: expect.any(Object),
      },
    ])
  })

  it('compares an older surface file without effects, prompt prose or a no-code-tool variant, and says what it could not compare', () => {
    const old = base() as Partial<Surface> & Surface
    delete old.prompt
    delete old.no_code_tool
    delete old.rendering
    for (const t of old.tools) delete t.effect
    const diff = diffSurfaces(old, base())
    // What a harness without a code tool is shown is new here, so it shows as added.
    expect(diff.tools.map((t) => [t.name, t.changes.map((c) => `${c.kind} ${c.path}`)])).toEqual([
      ['shell_run', ['added description (no code tool)']],
      ['shell_background', ['added description (no code tool)']],
    ])
    expect(diff.prompt.map((c) => `${c.kind} ${c.path}`)).toEqual([
      'added no code tool, shell on: executionLine',
      'added no code tool, shell on: inspectLine',
      'added no code tool, shell on: batchLine',
      'added no code tool, shell off: inspectLine',
    ])
    expect(diff.rendering.length).toBe(Object.values(base().rendering ?? {}).flat().length)
    expect(diff.rendering.every((r) => r.kind === 'added')).toBe(true)
    expect(diff.notes).toEqual([
      'the old surface records no effects; effects not compared (annotations are)',
      'the old surface records no prompt prose; prompt not compared',
      "the old surface records no rendered examples; the new one's show as added",
      'the old surface records nothing for a harness without a code tool; what the new one records for it shows as added',
    ])
    expect(diff.tokens.toolsNoCodeTool.before).toBeNull()
    expect(formatDiff(diff, 'text', { before: 'a', after: 'b' })).toContain('note: the old surface records no prompt prose')
  })

  it('refuses bad usage with exit 2 semantics (a UsageError) and names what is allowed', () => {
    expect(() => run()).toThrow(/contract diff takes A and optionally B/)
    expect(() => contract(['show', 'x'])).toThrow(/contract takes the subcommand diff, got "show"/)
    expect(() => run('a.json', 'b.json', '--format', 'html')).toThrow(/--format takes text, md, json, got "html"/)
  })
})

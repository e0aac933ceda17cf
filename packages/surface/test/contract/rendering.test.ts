import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { TOOL_NAMES } from '@hands/contracts'
import { RENDER_EXAMPLES, RenderExampleError, renderExamples, type RenderExamples } from '@hands/surface/contract'
import { REPO } from '../helpers/mcp.ts'

const SURFACE = join(REPO, 'packages', 'surface')

/** Renderer functions no tool's result, error or confirmation goes through, so no example can reach them, with where they are used. */
const NOT_A_TOOL_RENDERING: Record<string, string> = {
  // `hands attach --list`: the shells of running servers, for a person at a terminal.
  visibleText: 'src/cli/attach.ts',
}

describe('the rendering examples of the surface file', () => {
  it('take every branch of every renderer in src/render/ (V8 block coverage of a process that renders only them)', () => {
    const r = spawnSync(join(REPO, 'node_modules', '.bin', 'tsx'), ['--conditions=hands-source', join(SURFACE, 'test', 'fixtures', 'render-coverage.ts')], {
      cwd: SURFACE,
      encoding: 'utf8',
      timeout: 120_000,
    })
    expect(r.status, r.stderr).toBe(0)
    const unrun = JSON.parse(r.stdout) as Record<string, string[]>
    // Every renderer file was loaded and measured; a new one needs examples too.
    expect(Object.keys(unrun).sort()).toEqual(readdirSync(join(SURFACE, 'src', 'render')).sort())
    const isExempt = (block: string) => Object.hasOwn(NOT_A_TOOL_RENDERING, block.slice(0, block.indexOf(':')))
    for (const [file, blocks] of Object.entries(unrun))
      expect(
        blocks.filter((b) => !isExempt(b)),
        `blocks of ${file} no example takes`,
      ).toEqual([])
    // An exemption names a function that still exists and that no example reaches, or it goes.
    const exempt = Object.values(unrun)
      .flat()
      .filter(isExempt)
      .map((b) => b.slice(0, b.indexOf(':')))
    expect([...new Set(exempt)].sort()).toEqual(Object.keys(NOT_A_TOOL_RENDERING).sort())
  })

  it('cover every tool with results, an invalid input and an error, each example named once', () => {
    const rendering = renderExamples()
    expect(Object.keys(rendering)).toEqual(TOOL_NAMES)
    for (const tool of TOOL_NAMES) {
      const names = rendering[tool]?.map((e) => e.example) ?? []
      expect(new Set(names).size, tool).toBe(names.length)
      expect(
        names.some((n) => n.startsWith('invalid input: ')),
        tool,
      ).toBe(true)
      expect(
        names.some((n) => /^[a-z_]+: /.test(n) && !n.startsWith('invalid input')),
        tool,
      ).toBe(true)
      expect(RENDER_EXAMPLES[tool].results.length, tool).toBeGreaterThan(0)
    }
    // The delete confirmation is what a person reads before a destructive call.
    expect(rendering['delete']?.find((e) => e.example.startsWith('confirmation: two directories'))?.lines[0]).toBe('delete asks to delete 5 paths:')
  })

  it('refuse an example that cannot show what it means to: a result its contract refuses, a valid invalid input, a name used twice', () => {
    const broken = (edit: (e: RenderExamples) => void) => {
      const examples = structuredClone(RENDER_EXAMPLES)
      edit(examples)
      return () => renderExamples(examples)
    }
    expect(
      broken((e) => {
        delete (e.shell_logs.results[0]!.result as Partial<(typeof e.shell_logs.results)[0]['result']>).is_screen
      }),
    ).toThrow(/the shell_logs rendering example "a running server, lines scrolled away unseen" does not match its result contract: `is_screen` is required/)
    expect(broken((e) => void (e.copy.invalidInputs[0]!.input = { src: 'a', dest: 'b' }))).toThrow(
      'the copy rendering example "no dest" is valid input; it shows no invalid_input',
    )
    expect(broken((e) => void e.move.results.push(e.move.results[0]!))).toThrow(RenderExampleError)
  })
})

import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { renderAll } from '../codegen/files.ts'
import { checkGenerated, writeGenerated } from '../codegen/sync.ts'

const REPO = join(import.meta.dirname, '..', '..')

describe('renderAll', () => {
  it('renders the same bytes twice, with LF line ends and one trailing newline', () => {
    const a = renderAll()
    const b = renderAll()
    expect(a).toEqual(b)
    for (const f of a) {
      expect(f.text.includes('\r'), f.path).toBe(false)
      expect(f.text.endsWith('\n') && !f.text.endsWith('\n\n'), f.path).toBe(true)
    }
  })

  it('writes the python stub in positional call order with TypedDict results', () => {
    const pyi = renderAll().find((f) => f.path === 'generated/stubs/hands.pyi')?.text ?? ''
    expect(pyi).toContain('async def shell_run(commands: list[str], cwd: str | None = None) -> ShellRunResult:')
    expect(pyi).toContain('async def copy(src: str, dest: str, is_overwrite: bool = False) -> CopyResult:')
    expect(pyi).toContain('async def shell_type(id: str, text: str, is_enter: bool = True) -> ShellTypeResult:')
    expect(pyi).toContain('class ShellRunCommand(TypedDict):')
    expect(pyi).toContain('    commands: list[ShellRunCommand]')
  })

  it('writes a TypeScript stub that exports delete despite it being a reserved word', () => {
    const dts = renderAll().find((f) => f.path === 'generated/stubs/hands.d.ts')?.text ?? ''
    expect(dts).toContain('export { _delete as delete }')
    expect(dts).toContain('shell_logs(id: string, n?: number): Promise<ShellLogsResult>')
  })

  it('writes the surface shipped in @hands/contracts identical to generated/surface.json', () => {
    const files = renderAll()
    const shipped = files.find((f) => f.path === 'packages/contracts/surface.json')?.text
    expect(shipped).toBeDefined()
    expect(shipped).toBe(files.find((f) => f.path === 'generated/surface.json')?.text)
  })

  it('counts tokens per tool and a total that is their sum', () => {
    const budget = JSON.parse(renderAll().find((f) => f.path === 'generated/budget.json')?.text ?? '{}')
    expect(budget.tools).toHaveLength(10)
    const sum = budget.tools.reduce((a: number, t: { tokens: number }) => a + t.tokens, 0)
    expect(budget.total.tokens).toBe(sum)
    for (const t of budget.tools) expect(t.tokens).toBeGreaterThan(10)
  })
})

describe('the variant for a harness without a code tool', () => {
  const files = renderAll()
  const text = (path: string) => files.find((f) => f.path === path)?.text ?? ''

  it('is generated beside the default: prompt, budget and each API’s tool definitions, naming no code tool', () => {
    const variant = files.filter((f) => f.path.startsWith('generated/no-code-tool/')).map((f) => f.path)
    expect(variant).toEqual([
      'generated/no-code-tool/prompt.md',
      'generated/no-code-tool/budget.json',
      'generated/no-code-tool/budget.md',
      'generated/no-code-tool/api/openai.json',
      'generated/no-code-tool/api/openai-responses.json',
      'generated/no-code-tool/api/anthropic.json',
      'generated/no-code-tool/api/mcp.json',
    ])
    for (const path of variant) expect(text(path), path).not.toContain('python_execution')
    expect(text('generated/no-code-tool/prompt.md')).toContain('then poll `shell_logs`; no tool waits for you.')
    expect(text('generated/no-code-tool/prompt.md')).not.toContain('description\n')
    expect(text('generated/prompt.md')).toContain('## python_execution description')
  })

  it('is budgeted on its own: only shell_run and shell_background differ, and the totals are their sums', () => {
    const own = JSON.parse(text('generated/budget.json'))
    const none = JSON.parse(text('generated/no-code-tool/budget.json'))
    expect([own.code_tool, none.code_tool]).toEqual(['python_execution', null])
    const differ = none.tools.filter((t: { name: string; bytes: number }, i: number) => t.bytes !== own.tools[i].bytes).map((t: { name: string }) => t.name)
    expect(differ).toEqual(['shell_run', 'shell_background'])
    expect(none.total.tokens).toBe(none.tools.reduce((a: number, t: { tokens: number }) => a + t.tokens, 0))
    expect(none.total.tokens).toBeLessThan(own.total.tokens)
    expect(none.prompt.tokens).toBeLessThan(own.prompt.tokens)
    expect(text('generated/no-code-tool/budget.md')).toContain('with the descriptions for a harness without a code tool')
  })

  it('records the descriptions that differ and the prose in the surface file the review gate diffs', () => {
    const surface = JSON.parse(text('generated/surface.json'))
    expect(Object.keys(surface.no_code_tool.descriptions)).toEqual(['shell_run', 'shell_background'])
    const openai = JSON.parse(text('generated/no-code-tool/api/openai.json')).tools as Array<{ function: { name: string; description: string } }>
    expect(openai.find((t) => t.function.name === 'shell_run')?.function.description).toBe(surface.no_code_tool.descriptions.shell_run)
    expect(surface.no_code_tool.prompt.shell_on.codeToolParagraph).toBeNull()
  })
})

describe('checkGenerated and writeGenerated', () => {
  let root: string
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'hands-codegen-'))
    cpSync(join(REPO, 'generated'), join(root, 'generated'), { recursive: true })
    cpSync(join(REPO, 'packages', 'contracts', 'surface.json'), join(root, 'packages', 'contracts', 'surface.json'))
  })
  afterEach(() => rmSync(root, { recursive: true, force: true }))

  it('finds no drift in a copy of the committed generated files', () => {
    expect(checkGenerated(root, renderAll()).drift).toEqual([])
  })

  it('reports an edited file with a unified diff of the change', () => {
    const path = join(root, 'generated', 'prompt.md')
    writeFileSync(path, readFileSync(path, 'utf8').replace('never a fixed sleep', 'sleep 5 seconds'))
    const { drift, report } = checkGenerated(root, renderAll())
    expect(drift).toEqual(['generated/prompt.md'])
    expect(report).toContain('--- a/generated/prompt.md')
    expect(report).toContain('-Waiting is control flow you write here')
    expect(report).toContain('sleep 5 seconds')
  })

  it('reports an edited shipped surface.json', () => {
    const path = join(root, 'packages', 'contracts', 'surface.json')
    writeFileSync(path, readFileSync(path, 'utf8').replace('"maximum": 2000', '"maximum": 5000'))
    expect(checkGenerated(root, renderAll()).drift).toEqual(['packages/contracts/surface.json'])
  })

  it('reports a missing file and a stale file, and writeGenerated repairs both', () => {
    rmSync(join(root, 'generated', 'budget.md'))
    writeFileSync(join(root, 'generated', 'old.json'), '{}\n')
    const { drift } = checkGenerated(root, renderAll())
    expect(drift.sort()).toEqual(['generated/budget.md', 'generated/old.json'])
    expect(writeGenerated(root, renderAll()).sort()).toEqual(['generated/budget.md', 'generated/old.json'])
    expect(existsSync(join(root, 'generated', 'old.json'))).toBe(false)
    expect(checkGenerated(root, renderAll()).drift).toEqual([])
  })
})

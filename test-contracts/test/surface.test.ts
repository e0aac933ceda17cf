import { describe, expect, it } from 'vitest'
import { FS_CONTRACTS, TOOLS, TOOL_NAMES, describeTools, renderPrompt } from '@hands/contracts'
import {
  forbiddenProperties,
  forbiddenStrings,
  inputShapeViolations,
  overwriteViolations,
  promptViolations,
  resultShapeViolations,
  toolListViolations,
  topLevelUnions,
} from '../src/rules.ts'
import { generatedFiles, plain } from './helpers.ts'

const SPEC_ORDER = ['shell_run', 'shell_background', 'shell_logs', 'shell_type', 'shell_stop', 'copy', 'move', 'delete', 'create_directory', 'file_exists']

describe('the tool list', () => {
  it('is exactly the ten names of SPEC §2, in order, with no mega-tool and no waiter', () => {
    expect(
      toolListViolations(
        TOOLS.map((t) => t.name),
        SPEC_ORDER,
      ),
    ).toEqual([])
    expect(TOOL_NAMES).toEqual(SPEC_ORDER)
  })

  it('is caught when a tool is missing, reordered, named shell or fs, or waits', () => {
    expect(toolListViolations(SPEC_ORDER.slice(1), SPEC_ORDER)).not.toEqual([])
    expect(toolListViolations([...SPEC_ORDER].reverse(), SPEC_ORDER)).not.toEqual([])
    expect(toolListViolations([...SPEC_ORDER, 'shell'], SPEC_ORDER).some((v) => v.includes('"shell"'))).toBe(true)
    expect(toolListViolations(['fs'], []).some((v) => v.includes('"fs"'))).toBe(true)
    expect(toolListViolations(['shell_wait'], []).some((v) => v.includes('waits'))).toBe(true)
  })
})

describe('schemas', () => {
  it('have no property named until, timeout_secs, op, action, mode or stage at any depth', () => {
    for (const t of TOOLS) {
      expect(forbiddenProperties(plain(t.input)), t.name).toEqual([])
      expect(forbiddenProperties(plain(t.result)), t.name).toEqual([])
    }
  })

  it('catch a forbidden property however deep it hides', () => {
    const deep = { type: 'object', properties: { a: { type: 'array', items: { type: 'object', properties: { stage: { type: 'string' } } } } } }
    expect(forbiddenProperties(deep)).toEqual(['#/properties/a/items/properties/stage'])
    for (const name of ['until', 'timeout_secs', 'op', 'action', 'mode']) {
      expect(forbiddenProperties({ type: 'object', properties: { [name]: {} } })).toHaveLength(1)
    }
  })

  it('have no union of shapes at an input schema top level', () => {
    for (const t of TOOLS) expect(topLevelUnions(plain(t.input)), t.name).toEqual([])
    expect(topLevelUnions({ anyOf: [{}, {}] })).toEqual(['top-level anyOf'])
    expect(topLevelUnions({ oneOf: [{}, {}] })).toEqual(['top-level oneOf'])
  })

  it('close every input object and require only names that are properties', () => {
    for (const t of TOOLS) expect(inputShapeViolations(plain(t.input)), t.name).toEqual([])
    expect(inputShapeViolations({ type: 'object', properties: { a: {} }, required: ['b'] })).toEqual([
      'input lacks additionalProperties: false',
      'required "b" is not a property',
    ])
  })

  it('require every result key at every depth and admit no other key', () => {
    for (const t of TOOLS) expect(resultShapeViolations(plain(t.result)), t.name).toEqual([])
    const loose = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, required: ['a'], additionalProperties: false }
    expect(resultShapeViolations(loose)).toEqual(['#: "b" is not required'])
    const nested = {
      type: 'object',
      properties: { xs: { type: 'array', items: { type: 'object', properties: { p: {} }, required: [] } } },
      required: ['xs'],
      additionalProperties: false,
    }
    expect(resultShapeViolations(nested).length).toBe(2)
  })

  it('offer is_overwrite on copy and move only, and make both require src and dest', () => {
    const tools = TOOLS.map((t) => ({ name: t.name, input: plain(t.input) }))
    expect(overwriteViolations(tools, ['copy', 'move'])).toEqual([])
    const broken = tools.map((t) =>
      t.name === 'delete'
        ? { ...t, input: { ...t.input, properties: { ...(t.input['properties'] as object), is_overwrite: { type: 'boolean' } } } }
        : t.name === 'copy'
          ? { ...t, input: { ...t.input, required: ['src'] } }
          : t,
    )
    expect(overwriteViolations(broken, ['copy', 'move'])).toEqual(['copy does not require dest', 'delete offers is_overwrite'])
  })
})

describe('prose', () => {
  it('never says until or timeout_secs in a description, a property description or the prompt, with a code tool or without one', () => {
    for (const codeTool of ['python_execution', null]) {
      for (const t of describeTools({ codeTool })) {
        expect(forbiddenStrings(t.description), t.name).toEqual([])
        expect(forbiddenStrings(JSON.stringify(t.input)), t.name).toEqual([])
        expect(forbiddenStrings(JSON.stringify(t.result)), t.name).toEqual([])
      }
      for (const isShell of [true, false]) expect(forbiddenStrings(JSON.stringify(renderPrompt({ codeTool, isShell })))).toEqual([])
    }
    expect(forbiddenStrings('poll Until ready')).toHaveLength(1)
    expect(forbiddenStrings('{"timeout_secs": 5}')).toHaveLength(1)
  })

  it('never says until or timeout_secs in any generated file', () => {
    const files = generatedFiles()
    expect(files.length).toBeGreaterThanOrEqual(7)
    for (const f of files) expect(forbiddenStrings(f.text), f.path).toEqual([])
  })

  it('names all five fs tools in the inspect line, the long-running pair in one line and shell_run in the batch line', () => {
    const fsNames = FS_CONTRACTS.map((c) => c.name)
    expect(fsNames).toEqual(['copy', 'move', 'delete', 'create_directory', 'file_exists'])
    expect(promptViolations(renderPrompt(), fsNames)).toEqual([])
    const p = renderPrompt()
    expect(promptViolations({ ...p, inspectLine: p.inspectLine.replace('`file_exists`', 'test -f') }, fsNames)).toEqual(['inspect line omits file_exists'])
    expect(promptViolations({ ...p, executionLine: '- Long work: `shell_background`.' }, fsNames)).toEqual(['long-running line omits shell_logs'])
    expect(promptViolations({ ...p, batchLine: null }, fsNames)).toEqual(['batch line omits shell_run'])
  })

  it('renders the code tool name a host chooses, everywhere it is mentioned', () => {
    const tools = describeTools({ codeTool: 'js_sandbox' })
    expect(tools.find((t) => t.name === 'shell_run')?.description).toContain('js_sandbox')
    expect(tools.find((t) => t.name === 'shell_background')?.description).toContain('js_sandbox')
    expect(renderPrompt({ codeTool: 'js_sandbox' }).executionLine).toContain('`js_sandbox`')
    expect(JSON.stringify(tools)).not.toContain('python_execution')
  })

  it('without a code tool, names none anywhere, and the shell_run and shell_background descriptions still end in a whole sentence', () => {
    const tools = describeTools({ codeTool: null })
    const prose = renderPrompt({ codeTool: null })
    const text = [...tools.map((t) => t.description), ...Object.values(prose).filter((l) => l !== null)].join('\n')
    for (const phantom of ['python_execution', 'null', 'undefined', 'none', 'Drive it', ' in .', 'inside']) expect(text, phantom).not.toContain(phantom)
    const by = new Map<string, string>(tools.map((t) => [t.name, t.description]))
    expect(by.get('shell_run')).toMatch(
      /stop the rest\. Long or interactive work goes to shell_background\. Batch related lines into one call, not one call each\.$/,
    )
    expect(by.get('shell_background')).toMatch(/returns that shell\. Then poll shell_logs for its output\.$/)
    // Only the two descriptions that name the code tool differ.
    expect(tools.filter((t, i) => t.description !== TOOLS[i]?.description).map((t) => t.name)).toEqual(['shell_run', 'shell_background'])
    expect(prose.executionLine).toBe('- Long-running work: `shell_background`, then poll `shell_logs`; no tool waits for you.')
    expect(prose.codeToolParagraph).toBeNull()
    expect(
      promptViolations(
        prose,
        FS_CONTRACTS.map((c) => c.name),
      ),
    ).toEqual([])
  })

  it('ends shell_run with the code-tool pairing and shell_background with the poll loop; the other three name no sibling', () => {
    const by = new Map<string, string>(TOOLS.map((t) => [t.name, t.description]))
    expect(by.get('shell_run')).toMatch(/python_execution: batch the commands, read r\["commands"\]\[i\]\["stdout"\], print only what you need\.$/)
    expect(by.get('shell_background')).toMatch(/Then poll shell_logs in python_execution\.$/)
    for (const n of ['shell_logs', 'shell_type', 'shell_stop']) {
      const text = by.get(n) ?? ''
      for (const other of TOOL_NAMES) if (other !== n) expect(text.includes(other), `${n} names ${other}`).toBe(false)
    }
  })

  it('keeps each description to one sentence about the tool and at most one sibling named', () => {
    for (const t of [...TOOLS, ...describeTools({ codeTool: null })]) {
      const siblings = TOOL_NAMES.filter((n) => n !== t.name && new RegExp(`\\b${n}\\b`).test(t.description))
      expect(siblings.length, `${t.name} names ${siblings.join(', ')}`).toBeLessThanOrEqual(1)
      expect(t.description.length, t.name).toBeLessThanOrEqual(320)
    }
  })
})

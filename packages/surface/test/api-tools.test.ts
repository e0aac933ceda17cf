import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { TOOLS } from '@hands/contracts'
import { API_FORMATS, toApiTools } from '@hands/surface/adapters'

const REPO = join(import.meta.dirname, '..', '..', '..')

describe('toApiTools', () => {
  it('matches the committed generated/api files for every format (golden)', () => {
    for (const format of API_FORMATS) {
      const golden = JSON.parse(readFileSync(join(REPO, 'generated', 'api', `${format}.json`), 'utf8'))
      expect(golden.format).toBe(format)
      expect(toApiTools(format, TOOLS)).toEqual(golden.tools)
    }
  })

  it('gives OpenAI Chat Completions function tools with the input schema as parameters', () => {
    const [first] = toApiTools('openai', TOOLS)
    expect(first).toEqual({
      type: 'function',
      function: { name: 'shell_run', description: TOOLS[0]?.description, parameters: JSON.parse(JSON.stringify(TOOLS[0]?.input)) },
    })
  })

  it('gives Anthropic tools with input_schema and nothing else', () => {
    for (const t of toApiTools('anthropic', TOOLS)) expect(Object.keys(t)).toEqual(['name', 'description', 'input_schema'])
  })

  it('gives MCP tools with output schema and annotations derived from the effect', () => {
    const tools = toApiTools('mcp', TOOLS)
    const del = tools.find((t) => t.name === 'delete')
    expect(del?.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false })
    expect(tools.find((t) => t.name === 'file_exists')?.annotations).toMatchObject({ readOnlyHint: true })
    for (const t of tools) expect(t.outputSchema).toMatchObject({ type: 'object', additionalProperties: false })
  })

  it('refuses an unknown format with the list of formats', () => {
    expect(() => toApiTools('gemini' as never, TOOLS)).toThrow(/openai, openai-responses, anthropic, mcp/)
  })
})

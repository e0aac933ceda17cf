import type { ToolDescriptor } from '@hands/contracts'

/** The tool-definition formats of the big model APIs and MCP. */
export const API_FORMATS = ['openai', 'openai-responses', 'anthropic', 'mcp'] as const
export type ApiFormat = (typeof API_FORMATS)[number]

const json = (schema: unknown) => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>

/**
 * Tool definitions for one API, generated from the descriptors:
 * - `openai`: Chat Completions `tools` (`{type: "function", function: {name, description, parameters}}`)
 * - `openai-responses`: Responses API `tools` (`{type: "function", name, description, parameters}`)
 * - `anthropic`: Messages API `tools` (`{name, description, input_schema}`)
 * - `mcp`: `tools/list` entries (`{name, title, description, inputSchema, outputSchema, annotations}`)
 * OpenAI strict mode is not set: it requires every property to be required, and our optional
 * properties are genuinely optional.
 */
export function toApiTools(format: ApiFormat, tools: readonly ToolDescriptor[]): Array<Record<string, unknown>> {
  switch (format) {
    case 'openai':
      return tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: json(t.input) } }))
    case 'openai-responses':
      return tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: json(t.input) }))
    case 'anthropic':
      return tools.map((t) => ({ name: t.name, description: t.description, input_schema: json(t.input) }))
    case 'mcp':
      return tools.map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: json(t.input),
        outputSchema: json(t.result),
        annotations: { title: t.title, ...t.annotations },
      }))
    default: {
      const never: never = format
      throw new Error(`unknown API format ${String(never)}; use one of ${API_FORMATS.join(', ')}`)
    }
  }
}

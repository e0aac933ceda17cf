import type { ToolAnnotations, ToolDescriptor } from '@hands/contracts'

/** The tool-definition formats of the big model APIs and MCP. */
export const API_FORMATS = ['openai', 'openai-responses', 'anthropic', 'mcp'] as const
export type ApiFormat = (typeof API_FORMATS)[number]

/** A tool's input schema as plain JSON: always an object schema. */
export interface ObjectSchema {
  type: 'object'
  properties: Record<string, unknown>
  required?: string[]
  [keyword: string]: unknown
}

/** A Chat Completions function tool; assigns to the `openai` SDK's `ChatCompletionTool`. */
export interface ChatCompletionsTool {
  type: 'function'
  function: { name: string; description: string; parameters: ObjectSchema }
}

/**
 * A Responses API function tool; assigns to the `openai` SDK's `FunctionTool`. `strict` is
 * false: the API treats a tool without it as strict, which requires every property, and
 * optional properties here are genuinely optional.
 */
export interface ResponsesTool {
  type: 'function'
  name: string
  description: string
  parameters: ObjectSchema
  strict: false
}

/** An Anthropic Messages tool; assigns to `@anthropic-ai/sdk`'s `Tool`. */
export interface MessagesTool {
  name: string
  description: string
  input_schema: ObjectSchema
}

/** An MCP `tools/list` entry. */
export interface McpTool {
  name: string
  title: string
  description: string
  inputSchema: ObjectSchema
  outputSchema: ObjectSchema
  annotations: { title: string } & ToolAnnotations
}

/** The schema as plain JSON: what a model sees (TypeBox's symbols dropped). */
const json = (schema: unknown) => JSON.parse(JSON.stringify(schema)) as ObjectSchema

/** A tool's input schema as every API is sent it. */
export const inputSchemaOf = (tool: ToolDescriptor): ObjectSchema => json(tool.input)

/** Chat Completions `tools`: `{type: "function", function: {name, description, parameters}}`. */
export function toChatCompletionsTools(tools: readonly ToolDescriptor[]): ChatCompletionsTool[] {
  return tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: inputSchemaOf(t) } }))
}

/** Responses API `tools`: `{type: "function", name, description, parameters, strict: false}`. */
export function toResponsesTools(tools: readonly ToolDescriptor[]): ResponsesTool[] {
  return tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: inputSchemaOf(t), strict: false }))
}

/** Anthropic Messages `tools`: `{name, description, input_schema}`. */
export function toMessagesTools(tools: readonly ToolDescriptor[]): MessagesTool[] {
  return tools.map((t) => ({ name: t.name, description: t.description, input_schema: inputSchemaOf(t) }))
}

/** MCP `tools/list` entries: `{name, title, description, inputSchema, outputSchema, annotations}`. */
export function toMcpTools(tools: readonly ToolDescriptor[]): McpTool[] {
  return tools.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: inputSchemaOf(t),
    outputSchema: json(t.result),
    annotations: { title: t.title, ...t.annotations },
  }))
}

/** Tool definitions for one API, generated from the descriptors (see each `to*Tools`). */
export function toApiTools(format: 'openai', tools: readonly ToolDescriptor[]): ChatCompletionsTool[]
export function toApiTools(format: 'openai-responses', tools: readonly ToolDescriptor[]): ResponsesTool[]
export function toApiTools(format: 'anthropic', tools: readonly ToolDescriptor[]): MessagesTool[]
export function toApiTools(format: 'mcp', tools: readonly ToolDescriptor[]): McpTool[]
export function toApiTools(format: ApiFormat, tools: readonly ToolDescriptor[]): ChatCompletionsTool[] | ResponsesTool[] | MessagesTool[] | McpTool[]
export function toApiTools(format: ApiFormat, tools: readonly ToolDescriptor[]): ChatCompletionsTool[] | ResponsesTool[] | MessagesTool[] | McpTool[] {
  switch (format) {
    case 'openai':
      return toChatCompletionsTools(tools)
    case 'openai-responses':
      return toResponsesTools(tools)
    case 'anthropic':
      return toMessagesTools(tools)
    case 'mcp':
      return toMcpTools(tools)
    default: {
      const never: never = format
      throw new Error(`unknown API format ${String(never)}; use one of ${API_FORMATS.join(', ')}`)
    }
  }
}

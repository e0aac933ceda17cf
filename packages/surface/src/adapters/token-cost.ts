import { createRequire } from 'node:module'

type CountTokens = typeof import('gpt-tokenizer/encoding/o200k_base').countTokens

const require = createRequire(import.meta.url)
let count: CountTokens | null = null

/** o200k_base token count. The tokenizer's table takes ~0.5 s to load, so it loads on the first count, not with the package. */
function countTokens(text: string): number {
  count ??= (require('gpt-tokenizer/cjs/encoding/o200k_base') as { countTokens: CountTokens }).countTokens
  return count(text)
}

/** The tokenizer the budget is measured in. */
export const TOKEN_ENCODING = 'o200k_base'

/** What the model is sent for one tool: name, description and input schema, as JSON. */
export function modelView(tool: { name: string; description: string; input_schema: unknown }): string {
  return JSON.stringify({ name: tool.name, description: tool.description, input_schema: tool.input_schema })
}

/** Bytes and o200k_base tokens of a text. */
export function textCost(text: string): { bytes: number; tokens: number } {
  return { bytes: Buffer.byteLength(text, 'utf8'), tokens: countTokens(text) }
}

/** Bytes and tokens the model pays for one tool on every request. */
export function toolCost(tool: { name: string; description: string; input_schema: unknown }): { bytes: number; tokens: number } {
  return textCost(modelView(tool))
}

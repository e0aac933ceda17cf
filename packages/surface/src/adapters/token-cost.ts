import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'

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

import { API_FORMATS, toApiTools, type ApiFormat } from '@hands/surface/adapters'
import type { ToolDescriptor } from '@hands/contracts'
import { SOURCE_LINE, finish } from './header.ts'

/** `generated/api/<format>.json`: the tool definitions each model API takes, pinned for review. */
export function renderApiTools(format: ApiFormat, tools: readonly ToolDescriptor[]): string {
  return finish(JSON.stringify({ $comment: SOURCE_LINE, format, tools: toApiTools(format, tools) }, null, 2))
}

export { API_FORMATS }

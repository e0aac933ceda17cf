import { ERROR_CODES, ERROR_CODE_LIST, ErrorEnvelope, renderPrompt, type PromptProse, type ToolDescriptor } from '@hands/contracts'
import { SOURCE_LINE } from './render/header.ts'
import { plain, type Json } from './schema.ts'

/** One tool as `generated/surface.json` records it. */
export interface SurfaceTool {
  name: string
  title: string
  description: string
  input_schema: Json
  result_schema: Json
  call: string[]
  annotations: Record<string, boolean>
  toggle: 'shell' | null
}

export interface SurfaceErrorCode {
  code: string
  summary: string
  is_retryable: boolean
  is_always_preflight: boolean
}

/** The whole surface: what every renderer reads. */
export interface Surface {
  $comment: string
  tools: SurfaceTool[]
  errors: { codes: SurfaceErrorCode[]; envelope: Json }
}

/** Build the surface model from descriptors (in the order given). */
export function buildSurface(tools: readonly ToolDescriptor[]): Surface {
  return {
    $comment: SOURCE_LINE,
    tools: tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      input_schema: plain(t.input),
      result_schema: plain(t.result),
      call: [...t.call],
      annotations: { ...t.annotations },
      toggle: t.toggle,
    })),
    errors: {
      codes: ERROR_CODE_LIST.map((code) => ({ code, ...ERROR_CODES[code] })),
      envelope: plain(ErrorEnvelope),
    },
  }
}

/** Everything the generators render from. */
export interface GenInput {
  surface: Surface
  prompt: PromptProse
  codeTool: string
}

export function genInput(tools: readonly ToolDescriptor[], codeTool: string): GenInput {
  return { surface: buildSurface(tools), prompt: renderPrompt({ codeTool }), codeTool }
}

import { ERROR_CODES, ERROR_CODE_LIST, ErrorEnvelope, renderPrompt, type Effect, type PromptProse, type ToolDescriptor } from '@hands/contracts'

/** The header of every generated file: its source and the command that regenerates it. */
export const SOURCE_LINE = 'Generated from packages/contracts by `pnpm gen` (tools/codegen). Do not edit by hand.'

export type Json = Record<string, unknown>

/** One tool as the surface file records it: everything a model or a client is shown. */
export interface SurfaceTool {
  name: string
  title: string
  description: string
  input_schema: Json
  result_schema: Json
  call: string[]
  /** Absent in older surface files. */
  effect?: Effect
  annotations: Record<string, boolean>
  toggle: 'shell' | null
}

export interface SurfaceErrorCode {
  code: string
  summary: string
  is_retryable: boolean
  is_always_preflight: boolean
}

/**
 * The whole contract surface (`@hands/contracts/surface.json`, `generated/surface.json`): the
 * tools in SPEC order, the error codes and envelope, and the prompt prose with the shell tools
 * on and off.
 */
export interface Surface {
  $comment: string
  tools: SurfaceTool[]
  errors: { codes: SurfaceErrorCode[]; envelope: Json }
  /** Absent in older surface files. */
  prompt?: { shell_on: PromptProse; shell_off: PromptProse }
}

/** The schema as plain JSON: what a model or a second validator sees (TypeBox's symbols dropped). */
export function plain<T>(schema: T): Json {
  return JSON.parse(JSON.stringify(schema)) as Json
}

/** Build the surface from descriptors (in the order given) and the prose for `codeTool`. */
export function buildSurface(tools: readonly ToolDescriptor[], codeTool: string): Surface {
  return {
    $comment: SOURCE_LINE,
    tools: tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      input_schema: plain(t.input),
      result_schema: plain(t.result),
      call: [...t.call],
      effect: t.effect,
      annotations: { ...t.annotations },
      toggle: t.toggle,
    })),
    errors: {
      codes: ERROR_CODE_LIST.map((code) => ({ code, ...ERROR_CODES[code] })),
      envelope: plain(ErrorEnvelope),
    },
    prompt: { shell_on: renderPrompt({ codeTool, isShell: true }), shell_off: renderPrompt({ codeTool, isShell: false }) },
  }
}

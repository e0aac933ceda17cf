import { renderExamples, type Rendering } from './rendering.ts'
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

/** The prompt prose with the shell tools on and off. */
export interface SurfacePrompt {
  shell_on: PromptProse
  shell_off: PromptProse
}

/** What a harness without a code tool (`codeTool: null`) is shown instead. */
export interface SurfaceNoCodeTool {
  /** The descriptions that differ from the tools' own, by tool name. */
  descriptions: Record<string, string>
  prompt: SurfacePrompt
}

/**
 * The whole contract surface (`@hands/contracts/surface.json`, `generated/surface.json`): the
 * tools in SPEC order, the error codes and envelope, the prompt prose with the shell tools on and
 * off, what differs for a harness without a code tool, and the rendered text of fixed example
 * results, errors and confirmations per tool.
 */
export interface Surface {
  $comment: string
  tools: SurfaceTool[]
  errors: { codes: SurfaceErrorCode[]; envelope: Json }
  /** Absent in older surface files. */
  prompt?: SurfacePrompt
  /** Absent in older surface files. */
  no_code_tool?: SurfaceNoCodeTool
  /** Absent in older surface files. */
  rendering?: Rendering
}

const promptOf = (codeTool: string | null): SurfacePrompt => ({
  shell_on: renderPrompt({ codeTool, isShell: true }),
  shell_off: renderPrompt({ codeTool, isShell: false }),
})

/** The schema as plain JSON: what a model or a second validator sees (TypeBox's symbols dropped). */
export function plain<T>(schema: T): Json {
  return JSON.parse(JSON.stringify(schema)) as Json
}

/**
 * Build the surface from descriptors (in the order given) with the prose for `codeTool`, and the
 * same tools described for a harness without a code tool (`describeTools({ codeTool: null })`).
 */
export function buildSurface(tools: readonly ToolDescriptor[], codeTool: string, withoutCodeTool: readonly ToolDescriptor[]): Surface {
  const own = new Map(tools.map((t) => [t.name, t.description]))
  const descriptions = Object.fromEntries(withoutCodeTool.filter((t) => own.get(t.name) !== t.description).map((t) => [t.name, t.description]))
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
    prompt: promptOf(codeTool),
    no_code_tool: { descriptions, prompt: promptOf(null) },
    rendering: renderExamples(),
  }
}

import { renderPrompt, type PromptProse, type ToolDescriptor } from '@hands/contracts'
import { buildSurface, type Surface } from '@hands/surface/contract'

export type { Surface, SurfaceTool } from '@hands/surface/contract'

/** One variant of what the model reads: the tools as described for one code tool (null: none), and the prose. */
export interface ProseVariant {
  codeTool: string | null
  tools: readonly ToolDescriptor[]
  prompt: PromptProse
}

/** Everything the generators render from: the surface file, and each variant of the prose. */
export interface GenInput {
  surface: Surface
  /** With the default code tool. */
  own: ProseVariant
  /** For a harness without a code tool. */
  noCodeTool: ProseVariant
}

export function genInput(tools: readonly ToolDescriptor[], codeTool: string, withoutCodeTool: readonly ToolDescriptor[]): GenInput {
  return {
    surface: buildSurface(tools, codeTool, withoutCodeTool),
    own: { codeTool, tools, prompt: renderPrompt({ codeTool }) },
    noCodeTool: { codeTool: null, tools: withoutCodeTool, prompt: renderPrompt({ codeTool: null }) },
  }
}

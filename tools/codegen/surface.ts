import { renderPrompt, type PromptProse, type ToolDescriptor } from '@hands/contracts'
import { buildSurface, type Surface } from '@hands/surface/contract'

export type { Surface, SurfaceTool } from '@hands/surface/contract'

/** Everything the generators render from. */
export interface GenInput {
  surface: Surface
  prompt: PromptProse
  codeTool: string
}

export function genInput(tools: readonly ToolDescriptor[], codeTool: string): GenInput {
  return { surface: buildSurface(tools, codeTool), prompt: renderPrompt({ codeTool }), codeTool }
}

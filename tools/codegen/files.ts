import { CODE_TOOL, TOOLS, describeTools, type ToolDescriptor } from '@hands/contracts'
import { API_FORMATS, renderApiTools } from './render/api-tools.ts'
import { computeBudget, renderBudgetJson, renderBudgetMd } from './render/budget.ts'
import { renderPromptMd } from './render/prompt-md.ts'
import { renderRenderingMd } from './render/rendering-md.ts'
import { renderPythonStubs, renderTypeScriptStubs } from './render/stubs.ts'
import { renderSurfaceJson } from './render/surface-json.ts'
import { renderToolsMd } from './render/tools-md.ts'
import { genInput, type ProseVariant } from './surface.ts'

/** One generated file: its path under the repo root and its full text. */
export interface GeneratedFile {
  path: string
  text: string
}

/** Where the files of the variant for a harness without a code tool go. */
export const NO_CODE_TOOL_DIR = 'generated/no-code-tool'

/** What the model reads in one prose variant, under `dir`: the prompt, the budget and each API's tool definitions. */
function variantFiles(dir: string, variant: ProseVariant): GeneratedFile[] {
  const budget = computeBudget(variant)
  return [
    { path: `${dir}/prompt.md`, text: renderPromptMd(variant.prompt, variant.codeTool) },
    { path: `${dir}/budget.json`, text: renderBudgetJson(budget) },
    { path: `${dir}/budget.md`, text: renderBudgetMd(budget, `${dir}/prompt.md`) },
    ...API_FORMATS.map((format) => ({ path: `${dir}/api/${format}.json`, text: renderApiTools(format, variant.tools) })),
  ]
}

/** Render every generated file from the contracts. Pure: same contracts, same bytes. */
export function renderAll(
  tools: readonly ToolDescriptor[] = TOOLS,
  codeTool: string = CODE_TOOL,
  withoutCodeTool: readonly ToolDescriptor[] = describeTools({ codeTool: null }),
): GeneratedFile[] {
  const input = genInput(tools, codeTool, withoutCodeTool)
  return [
    { path: 'generated/surface.json', text: renderSurfaceJson(input.surface) },
    // The same manifest shipped inside @hands/contracts, so an installed version can be diffed.
    { path: 'packages/contracts/surface.json', text: renderSurfaceJson(input.surface) },
    { path: 'generated/tools.md', text: renderToolsMd(input.surface) },
    { path: 'generated/rendering.md', text: renderRenderingMd(input.surface) },
    { path: 'generated/stubs/hands.pyi', text: renderPythonStubs(input.surface) },
    { path: 'generated/stubs/hands.d.ts', text: renderTypeScriptStubs(input.surface) },
    ...variantFiles('generated', input.own),
    ...variantFiles(NO_CODE_TOOL_DIR, input.noCodeTool),
  ]
}

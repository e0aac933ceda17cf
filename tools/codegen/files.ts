import { CODE_TOOL, TOOLS, type ToolDescriptor } from '@hands/contracts'
import { API_FORMATS, renderApiTools } from './render/api-tools.ts'
import { computeBudget, renderBudgetJson, renderBudgetMd } from './render/budget.ts'
import { renderPromptMd } from './render/prompt-md.ts'
import { renderPythonStubs, renderTypeScriptStubs } from './render/stubs.ts'
import { renderSurfaceJson } from './render/surface-json.ts'
import { renderToolsMd } from './render/tools-md.ts'
import { genInput, type GenInput } from './surface.ts'

/** One generated file: its path under the repo root and its full text. */
export interface GeneratedFile {
  path: string
  text: string
}

/** Render every generated file from the contracts. Pure: same contracts, same bytes. */
export function renderAll(tools: readonly ToolDescriptor[] = TOOLS, codeTool: string = CODE_TOOL): GeneratedFile[] {
  const input: GenInput = genInput(tools, codeTool)
  const budget = computeBudget(input.surface, input.prompt)
  return [
    { path: 'generated/surface.json', text: renderSurfaceJson(input.surface) },
    // The same manifest shipped inside @hands/contracts, so an installed version can be diffed.
    { path: 'packages/contracts/surface.json', text: renderSurfaceJson(input.surface) },
    { path: 'generated/tools.md', text: renderToolsMd(input.surface) },
    { path: 'generated/prompt.md', text: renderPromptMd(input.prompt, input.codeTool) },
    { path: 'generated/stubs/hands.pyi', text: renderPythonStubs(input.surface) },
    { path: 'generated/stubs/hands.d.ts', text: renderTypeScriptStubs(input.surface) },
    { path: 'generated/budget.json', text: renderBudgetJson(budget) },
    { path: 'generated/budget.md', text: renderBudgetMd(budget) },
    ...API_FORMATS.map((format) => ({ path: `generated/api/${format}.json`, text: renderApiTools(format, tools) })),
  ]
}

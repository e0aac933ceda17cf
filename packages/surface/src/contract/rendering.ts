import { TOOL_NAMES, checkInput, checkResult, contractOf, explainIssues, type ToolContract, type ToolName } from '@hands/contracts'
import { confirmationText } from '../mcp/confirm.ts'
import { failure, invalidInput, type CallOutcome } from '../outcome.ts'
import { renderOutcome } from '../render/text.ts'
import { RENDER_EXAMPLES, type ToolExamples } from './examples.ts'

/** One example as it reads: what a model reads back (or, for a confirmation, what the person asked reads), line by line. */
export interface RenderedExample {
  example: string
  lines: string[]
}

/** The rendered examples of each tool, in SPEC order: `rendering` in the surface file. */
export type Rendering = Record<string, RenderedExample[]>

/** An example that cannot show what it means to (a result its contract refuses, an input it accepts, a name used twice). */
export class RenderExampleError extends Error {}

const lines = (text: string) => text.split('\n')

function renderTool<N extends ToolName>(tool: N, examples: ToolExamples<N>): RenderedExample[] {
  const contract = contractOf(tool) as ToolContract
  const out: RenderedExample[] = []
  const add = (example: string, text: string) => {
    if (out.some((e) => e.example === example)) throw new RenderExampleError(`${tool} has two rendering examples named ${JSON.stringify(example)}`)
    out.push({ example, lines: lines(text) })
  }
  for (const { example, result, workspace } of examples.results) {
    const checked = checkResult(contract, result)
    if (!checked.ok) {
      const { message } = explainIssues(checked.issues)
      throw new RenderExampleError(`the ${tool} rendering example ${JSON.stringify(example)} does not match its result contract: ${message}`)
    }
    const outcome = { ok: true, tool, result } as CallOutcome
    add(example, renderOutcome(outcome, workspace === undefined ? {} : { workspace }))
  }
  for (const { example, result } of examples.olderResults ?? []) add(example, renderOutcome({ ok: true, tool, result } as CallOutcome))
  for (const { example, input } of examples.invalidInputs) {
    const checked = checkInput(contract, input)
    if (checked.ok) throw new RenderExampleError(`the ${tool} rendering example ${JSON.stringify(example)} is valid input; it shows no invalid_input`)
    add(`invalid input: ${example}`, renderOutcome(invalidInput(tool, checked.issues)))
  }
  for (const { example, error } of examples.errors) add(`${error.code}: ${example}`, renderOutcome(failure(tool, error)))
  for (const { example, request } of examples.confirmations ?? []) add(`confirmation: ${example}`, confirmationText({ tool, ...request }))
  return out
}

/** The examples of every tool, as `examples.ts` holds them. */
export type RenderExamples = { [N in ToolName]: ToolExamples<N> }

/**
 * Render every tool's fixed examples (`examples.ts` unless given) the way hands renders them for
 * the model and for the person confirming. Throws a `RenderExampleError` for an example that cannot
 * show what it means to: a result its contract refuses, an invalid input the schema accepts, a
 * name used twice.
 */
export function renderExamples(examples: RenderExamples = RENDER_EXAMPLES): Rendering {
  return Object.fromEntries(TOOL_NAMES.map((tool) => [tool, renderTool(tool, examples[tool] as ToolExamples<typeof tool>)]))
}

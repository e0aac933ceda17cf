import { TOKEN_ENCODING, textCost, toolCost } from '@hands/surface/adapters'
import type { ProseVariant } from '../surface.ts'
import { SOURCE_LINE, finish, htmlHeader } from './header.ts'

export interface Cost {
  bytes: number
  tokens: number
}

export interface Budget {
  $comment: string
  encoding: string
  measures: string
  /** The code tool the descriptions and prose name; null for a harness without one. */
  code_tool: string | null
  tools: Array<{ name: string } & Cost>
  total: Cost
  prompt: Cost
}

/** What the model is sent in one prose variant: each tool at rest, all of them, and the prompt prose. */
export function computeBudget({ codeTool, tools: descriptors, prompt }: ProseVariant): Budget {
  const tools = descriptors.map((t) => ({ name: t.name, ...toolCost({ name: t.name, description: t.description, input_schema: t.input }) }))
  const promptText = [prompt.executionLine, prompt.inspectLine, prompt.batchLine, prompt.codeToolParagraph].filter((l): l is string => l !== null).join('\n')
  return {
    $comment: SOURCE_LINE,
    encoding: TOKEN_ENCODING,
    measures: 'JSON of {name, description, input_schema} per tool; the prompt prose lines and code-tool paragraph',
    code_tool: codeTool,
    tools,
    total: {
      bytes: tools.reduce((a, t) => a + t.bytes, 0),
      tokens: tools.reduce((a, t) => a + t.tokens, 0),
    },
    prompt: textCost(promptText),
  }
}

/** `budget.json` of a variant. */
export function renderBudgetJson(budget: Budget): string {
  return finish(JSON.stringify(budget, null, 2))
}

/** `budget.md` of a variant: the cost of each tool at rest, for review; `promptFile` is where its prose is. */
export function renderBudgetMd(budget: Budget, promptFile: string): string {
  const rows = budget.tools.map((t) => `| \`${t.name}\` | ${t.bytes} | ${t.tokens} |`)
  const variant = budget.code_tool === null ? 'a harness without a code tool' : `a harness whose code tool is \`${budget.code_tool}\``
  return finish(
    [
      htmlHeader(),
      '# Token budget',
      '',
      `What the model is sent for each tool (name + description + input schema, as JSON), in bytes and ${budget.encoding} tokens, with the descriptions for ${variant}.`,
      '',
      '| tool | bytes | tokens |',
      '|---|---:|---:|',
      ...rows,
      `| **total** | **${budget.total.bytes}** | **${budget.total.tokens}** |`,
      '',
      `Prompt prose (${promptFile}, without headings): ${budget.prompt.bytes} bytes, ${budget.prompt.tokens} tokens.`,
    ].join('\n'),
  )
}

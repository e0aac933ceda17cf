import type { PromptProse } from '@hands/contracts'
import { TOKEN_ENCODING, textCost, toolCost } from '@hands/surface/adapters'
import type { Surface } from '../surface.ts'
import { SOURCE_LINE, finish, htmlHeader } from './header.ts'

export interface Cost {
  bytes: number
  tokens: number
}

export interface Budget {
  $comment: string
  encoding: string
  measures: string
  tools: Array<{ name: string } & Cost>
  total: Cost
  prompt: Cost
}

export function computeBudget(surface: Surface, prompt: PromptProse): Budget {
  const tools = surface.tools.map((t) => ({ name: t.name, ...toolCost(t) }))
  const promptText = [prompt.executionLine, prompt.inspectLine, prompt.batchLine, prompt.codeToolParagraph].filter((l): l is string => l !== null).join('\n')
  return {
    $comment: SOURCE_LINE,
    encoding: TOKEN_ENCODING,
    measures: 'JSON of {name, description, input_schema} per tool; the prompt prose lines and code-tool paragraph',
    tools,
    total: {
      bytes: tools.reduce((a, t) => a + t.bytes, 0),
      tokens: tools.reduce((a, t) => a + t.tokens, 0),
    },
    prompt: textCost(promptText),
  }
}

/** `generated/budget.json`. */
export function renderBudgetJson(budget: Budget): string {
  return finish(JSON.stringify(budget, null, 2))
}

/** `generated/budget.md`: the cost of each tool at rest, for review. */
export function renderBudgetMd(budget: Budget): string {
  const rows = budget.tools.map((t) => `| \`${t.name}\` | ${t.bytes} | ${t.tokens} |`)
  return finish(
    [
      htmlHeader(),
      '# Token budget',
      '',
      `What the model is sent for each tool (name + description + input schema, as JSON), in bytes and ${budget.encoding} tokens.`,
      '',
      '| tool | bytes | tokens |',
      '|---|---:|---:|',
      ...rows,
      `| **total** | **${budget.total.bytes}** | **${budget.total.tokens}** |`,
      '',
      `Prompt prose (generated/prompt.md, without headings): ${budget.prompt.bytes} bytes, ${budget.prompt.tokens} tokens.`,
    ].join('\n'),
  )
}

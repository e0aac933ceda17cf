import type { PromptProse } from '@hands/contracts'
import { finish, htmlHeader } from './header.ts'

/** `generated/prompt.md`: the prompt prose exactly as a harness pastes it. */
export function renderPromptMd(prompt: PromptProse, codeTool: string): string {
  const lines = [prompt.executionLine, prompt.inspectLine, prompt.batchLine].filter((l): l is string => l !== null)
  return finish([htmlHeader(), '## System prompt', '', ...lines, '', `## ${codeTool} description`, '', prompt.codeToolParagraph ?? ''].join('\n'))
}

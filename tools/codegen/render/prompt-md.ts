import { promptMarkdown, type PromptProse } from '@hands/contracts'
import { finish, htmlHeader } from './header.ts'

/** `generated/prompt.md`: the prompt prose exactly as a harness pastes it. */
export function renderPromptMd(prompt: PromptProse, codeTool: string | null): string {
  return finish([htmlHeader(), promptMarkdown(prompt, codeTool)].join('\n'))
}

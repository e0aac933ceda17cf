import { DEFAULT_PROSE, type ProseContext } from './descriptor.ts'
import { P, SHELL_BACKGROUND, SHELL_LOGS, SHELL_RUN } from './names.ts'
import { FS_CONTRACTS } from './registry.ts'

/** The prose a harness pastes into its system prompt and code-tool description. */
export interface PromptProse {
  /** Execution surfaces: where long-running work goes. Null when shell tools are off. */
  executionLine: string | null
  /** Inspect/routing: names every filesystem tool. */
  inspectLine: string
  /** Batch: one shell_run per batch. Null when shell tools are off. */
  batchLine: string | null
  /** For the code tool's own description: waiting is a loop written there. Null when shell tools are off or there is no code tool. */
  codeToolParagraph: string | null
}

export interface PromptOptions extends ProseContext {
  /** Whether the five shell tools are enabled (the `shell` toggle). */
  isShell: boolean
}

const code = (s: string) => `\`${s}\``

/** Render the prompt prose; every tool name comes from the registry and the name constants. */
export function renderPrompt(options: Partial<PromptOptions> = {}): PromptProse {
  const { codeTool, isShell } = { ...DEFAULT_PROSE, isShell: true, ...options }
  const fsNames = FS_CONTRACTS.map((c) => code(c.name)).join('/')
  const pollIn = codeTool === null ? '' : ` inside ${code(codeTool)}`
  return {
    executionLine: isShell ? `- Long-running work: ${code(SHELL_BACKGROUND)}, then poll ${code(SHELL_LOGS)}${pollIn}; no tool waits for you.` : null,
    inspectLine: isShell
      ? `- ${fsNames} change and probe the filesystem; keep ${code(SHELL_RUN)} for running programs.`
      : `- ${fsNames} change and probe the filesystem.`,
    batchLine: isShell ? `- Batch: one ${code(SHELL_RUN)} with a ${code(P.commands)} array, never one call per file.` : null,
    codeToolParagraph:
      isShell && codeTool !== null
        ? `Waiting is control flow you write here: ${code(SHELL_BACKGROUND)}, then ${code(SHELL_LOGS)} in a bounded loop ` +
          `that breaks on what you read (an error line, a parsed port), never a fixed sleep.`
        : null,
  }
}

/**
 * The prompt prose as Markdown, as a harness pastes it: the system-prompt lines, then the code
 * tool's paragraph under a heading naming the code tool (left out when shell tools are off or
 * there is no code tool).
 */
export function promptMarkdown(prose: PromptProse, codeTool: string | null): string {
  const lines = [prose.executionLine, prose.inspectLine, prose.batchLine].filter((l): l is string => l !== null)
  const out = ['## System prompt', '', ...lines]
  if (prose.codeToolParagraph !== null && codeTool !== null) out.push('', `## ${codeTool} description`, '', prose.codeToolParagraph)
  return out.join('\n')
}

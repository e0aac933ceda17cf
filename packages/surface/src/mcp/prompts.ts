import { CODE_TOOL, promptMarkdown, renderPrompt } from '@hands/contracts'
import { ErrorCode, type GetPromptResult, type Prompt } from '@modelcontextprotocol/sdk/types.js'
import { NO_CODE_TOOL, parseCodeTool } from '../code-tool.ts'
import { codeToolOf, type SurfaceOptions } from '../session.ts'
import { protocolError } from './protocol-error.ts'

/** The prompt that carries hands' routing prose. */
export const ROUTING_PROMPT = 'hands_routing'
/** Its one argument: the harness's code tool, named in the prose. */
export const CODE_TOOL_ARGUMENT = 'code_tool'

/** What a tool name may look like (MCP's own tool-name characters). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/

/** The prompts this server offers. */
export const PROMPTS: Prompt[] = [
  {
    name: ROUTING_PROMPT,
    title: 'How to route work across the hands tools',
    description:
      "The routing lines for a system prompt (where long-running work goes, which tools change the filesystem, how to batch) and the paragraph for the code tool's own description, for exactly the tools this server offers.",
    arguments: [
      {
        name: CODE_TOOL_ARGUMENT,
        description: `The harness's code tool, named where the prose says waiting is a loop written there, or ${NO_CODE_TOOL} for a harness without one (default: the server's, ${CODE_TOOL} unless --code-tool says otherwise).`,
        required: false,
      },
    ],
  },
]

/** `prompts/get`: the routing prose for the enabled tools, with the code tool's name from the arguments. */
export function getPrompt(name: string, args: Record<string, string>, options: Pick<SurfaceOptions, 'codeTool' | 'toggles'>): GetPromptResult {
  if (name !== ROUTING_PROMPT)
    throw protocolError(
      ErrorCode.InvalidParams,
      `Unknown prompt: ${JSON.stringify(name)}; this server's prompts are ${PROMPTS.map((p) => p.name).join(', ')}`,
      { prompt: name },
    )
  const unknown = Object.keys(args).filter((k) => k !== CODE_TOOL_ARGUMENT)
  if (unknown.length > 0) {
    throw protocolError(ErrorCode.InvalidParams, `${ROUTING_PROMPT} takes only the argument ${CODE_TOOL_ARGUMENT}, got ${unknown.join(', ')}`, {
      arguments: unknown,
    })
  }
  const given = args[CODE_TOOL_ARGUMENT]?.trim()
  if (given && !TOOL_NAME.test(given)) {
    throw protocolError(ErrorCode.InvalidParams, `${CODE_TOOL_ARGUMENT} must be a tool name (1 to 64 letters, digits, _ . -), got ${JSON.stringify(given)}`, {
      argument: CODE_TOOL_ARGUMENT,
    })
  }
  const codeTool = given ? parseCodeTool(given) : codeToolOf(options.codeTool)
  const prose = renderPrompt({ codeTool, isShell: options.toggles?.shell ?? true })
  return {
    description: `hands routing prose for ${codeTool ?? 'a harness without a code tool'}`,
    messages: [{ role: 'user', content: { type: 'text', text: promptMarkdown(prose, codeTool) } }],
  }
}

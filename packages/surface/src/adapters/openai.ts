import type { Session } from '../session.ts'
import { toChatCompletionsTools, type ChatCompletionsTool } from './api-tools.ts'
import { createDispatcher } from './dispatch.ts'

export { toChatCompletionsTools, type ChatCompletionsTool, type ObjectSchema } from './api-tools.ts'

/**
 * A tool call from a Chat Completions assistant message (`message.tool_calls[i]`); the SDK's
 * `ChatCompletionMessageToolCall` assigns to it. hands offers no custom tools, so a custom call
 * is answered as a call to an unknown tool.
 */
export type ChatCompletionsToolCall =
  | { id: string; type: 'function'; function: { name: string; arguments: string } }
  | { id: string; type: 'custom'; custom: { name: string; input: string } }

/** A `role: "tool"` message answering one call; assigns to the SDK's `ChatCompletionToolMessageParam`. */
export interface ChatCompletionsToolMessage {
  role: 'tool'
  tool_call_id: string
  content: string
}

/** hands for the OpenAI Chat Completions API: the tool definitions and a handler for tool calls. */
export interface ChatCompletionsAdapter {
  /** Pass as `tools` to `chat.completions.create`. */
  readonly tools: ChatCompletionsTool[]
  /**
   * Run the calls of one assistant message (read-only calls in parallel, the rest in order) and
   * resolve to one tool message per call, in call order. Never rejects for a tool failure: a
   * failure, or `arguments` that are not valid JSON, is a message the model reads.
   */
  handle(toolCalls: readonly ChatCompletionsToolCall[] | null | undefined): Promise<ChatCompletionsToolMessage[]>
}

/** Bind a session to the Chat Completions API. */
export function createChatCompletionsAdapter(session: Session): ChatCompletionsAdapter {
  const dispatch = createDispatcher(session)
  return {
    tools: toChatCompletionsTools(session.tools),
    handle: (toolCalls) =>
      Promise.all(
        (toolCalls ?? []).map(async (c) => {
          const outcome =
            c.type === 'function' ? await dispatch.callWithJson(c.function.name, c.function.arguments) : await dispatch.call(c.custom.name, c.custom.input)
          return { role: 'tool' as const, tool_call_id: c.id, content: dispatch.text(outcome) }
        }),
      ),
  }
}

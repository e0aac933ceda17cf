import type { Session } from '../session.ts'
import { toMessagesTools, type MessagesTool } from './api-tools.ts'
import { createDispatcher } from './dispatch.ts'

export { toMessagesTools, type MessagesTool, type ObjectSchema } from './api-tools.ts'

/** A `tool_use` content block of an assistant message; the SDK's `ToolUseBlock` assigns to it. */
export interface MessagesToolUse {
  type: 'tool_use'
  id: string
  name: string
  input: unknown
}

/** A `tool_result` block answering one `tool_use`; `is_error` is true for a failure. */
export interface MessagesToolResult {
  type: 'tool_result'
  tool_use_id: string
  content: string
  is_error: boolean
}

/** The user message carrying the results; assigns to the SDK's `MessageParam`. */
export interface MessagesToolResultMessage {
  role: 'user'
  content: MessagesToolResult[]
}

/** hands for the Anthropic Messages API: the tool definitions and a handler for `tool_use` blocks. */
export interface MessagesAdapter {
  /** Pass as `tools` to `messages.create`. */
  readonly tools: MessagesTool[]
  /**
   * Run the `tool_use` blocks among an assistant message's content (read-only calls in parallel,
   * the rest in order; other blocks are skipped) and resolve to the user message with one
   * `tool_result` per call, in call order. Never rejects for a tool failure.
   */
  handle(content: ReadonlyArray<MessagesToolUse | { type: string }>): Promise<MessagesToolResultMessage>
}

const isToolUse = (block: { type: string }): block is MessagesToolUse => block.type === 'tool_use'

/** Bind a session to the Anthropic Messages API. */
export function createMessagesAdapter(session: Session): MessagesAdapter {
  const dispatch = createDispatcher(session)
  return {
    tools: toMessagesTools(session.tools),
    handle: async (content) => ({
      role: 'user',
      content: await Promise.all(
        content.filter(isToolUse).map(async (b) => {
          const outcome = await dispatch.call(b.name, b.input)
          return { type: 'tool_result' as const, tool_use_id: b.id, content: dispatch.text(outcome), is_error: !outcome.ok }
        }),
      ),
    }),
  }
}

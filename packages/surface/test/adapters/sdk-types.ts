/**
 * Compiled against the real SDK types (by `pnpm typecheck` and by sdk-types.test.ts); never run.
 * Each line assigns what hands gives to the type the SDK takes, or what the SDK gives to what
 * hands takes, without a cast.
 */
import type Anthropic from '@anthropic-ai/sdk'
import type { ContentBlock, MessageParam, Tool as AnthropicTool, ToolResultBlockParam, ToolUnion } from '@anthropic-ai/sdk/resources/messages'
import { generateText, type LanguageModel, type ModelMessage, type ToolSet } from 'ai'
import type OpenAI from 'openai'
import type { ChatCompletionMessage, ChatCompletionMessageParam, ChatCompletionTool, ChatCompletionToolMessageParam } from 'openai/resources/chat/completions'
import type { FunctionTool, Response, ResponseInputItem, Tool as ResponsesToolParam } from 'openai/resources/responses/responses'
import { TOOLS } from '@hands/contracts'
import type { CallOutcome, Session } from '@hands/surface'
import { toApiTools } from '@hands/surface/adapters'
import { createAiSdkTools, type AiSdkToolSet } from '@hands/surface/ai-sdk'
import { createMessagesAdapter, toMessagesTools } from '@hands/surface/anthropic'
import { createChatCompletionsAdapter, toChatCompletionsTools } from '@hands/surface/openai'
import { createResponsesAdapter, toResponsesTools } from '@hands/surface/openai-responses'

declare const session: Session

export async function chatCompletions(openai: OpenAI, message: ChatCompletionMessage): Promise<ChatCompletionMessageParam[]> {
  const hands = createChatCompletionsAdapter(session)
  const tools: ChatCompletionTool[] = hands.tools
  const generated: ChatCompletionTool[] = toApiTools('openai', TOOLS)
  const direct: ChatCompletionTool[] = toChatCompletionsTools(TOOLS)
  await openai.chat.completions.create({ model: 'm', messages: [], tools: [...tools, ...generated, ...direct] })
  const replies: ChatCompletionToolMessageParam[] = await hands.handle(message.tool_calls)
  return [message, ...replies]
}

export async function responses(openai: OpenAI, response: Response): Promise<ResponseInputItem[]> {
  const hands = createResponsesAdapter(session)
  const tools: FunctionTool[] = hands.tools
  const generated: FunctionTool[] = toApiTools('openai-responses', TOOLS)
  const direct: ResponsesToolParam[] = toResponsesTools(TOOLS)
  await openai.responses.create({ model: 'm', input: [], tools: [...tools, ...generated, ...direct] })
  const outputs: ResponseInputItem[] = await hands.handle(response.output)
  await openai.responses.create({ model: 'm', previous_response_id: response.id, input: outputs, tools: hands.tools })
  return outputs
}

export async function messages(anthropic: Anthropic, content: ContentBlock[]): Promise<MessageParam[]> {
  const hands = createMessagesAdapter(session)
  const tools: AnthropicTool[] = hands.tools
  const generated: AnthropicTool[] = toApiTools('anthropic', TOOLS)
  const direct: ToolUnion[] = toMessagesTools(TOOLS)
  await anthropic.messages.create({ model: 'm', max_tokens: 1, messages: [], tools: [...tools, ...generated, ...direct] })
  const reply = await hands.handle(content)
  const results: ToolResultBlockParam[] = reply.content
  const next: MessageParam = reply
  return [{ role: 'assistant', content }, next, { role: 'user', content: results }]
}

export async function aiSdk(model: LanguageModel): Promise<ModelMessage[]> {
  const tools: AiSdkToolSet = createAiSdkTools(session)
  const set: ToolSet = tools
  const result = await generateText({ model, tools, prompt: 'p' })
  const outcomes: CallOutcome[] = result.staticToolResults.map((r) => r.output)
  void set
  void outcomes
  return result.response.messages
}

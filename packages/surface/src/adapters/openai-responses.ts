import type { Session } from '../session.ts'
import { toResponsesTools, type ResponsesTool } from './api-tools.ts'
import { createDispatcher } from './dispatch.ts'

export { toResponsesTools, type ObjectSchema, type ResponsesTool } from './api-tools.ts'

/** A `function_call` output item of a response; the SDK's `ResponseFunctionToolCall` assigns to it. */
export interface ResponsesFunctionCall {
  type: 'function_call'
  call_id: string
  name: string
  arguments: string
}

/** A `function_call_output` input item answering one call; assigns to the SDK's `ResponseInputItem`. */
export interface ResponsesFunctionCallOutput {
  type: 'function_call_output'
  call_id: string
  output: string
}

/** hands for the OpenAI Responses API: the tool definitions and a handler for `function_call` items. */
export interface ResponsesAdapter {
  /** Pass as `tools` to `responses.create`. */
  readonly tools: ResponsesTool[]
  /**
   * Run the `function_call` items among a response's output items (read-only calls in parallel,
   * the rest in order; other items are skipped) and resolve to one `function_call_output` per
   * call, in call order. Never rejects for a tool failure: a failure, or `arguments` that are not
   * valid JSON, is an output the model reads.
   */
  handle(output: ReadonlyArray<ResponsesFunctionCall | { type: string }>): Promise<ResponsesFunctionCallOutput[]>
}

const isFunctionCall = (item: { type: string }): item is ResponsesFunctionCall => item.type === 'function_call'

/** Bind a session to the Responses API. */
export function createResponsesAdapter(session: Session): ResponsesAdapter {
  const dispatch = createDispatcher(session)
  return {
    tools: toResponsesTools(session.tools),
    handle: (output) =>
      Promise.all(
        output.filter(isFunctionCall).map(async (c) => ({
          type: 'function_call_output' as const,
          call_id: c.call_id,
          output: dispatch.text(await dispatch.callWithJson(c.name, c.arguments)),
        })),
      ),
  }
}

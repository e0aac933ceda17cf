import { jsonSchema, tool, type JSONSchema7, type Tool } from 'ai'
import type { CallOutcome } from '../outcome.ts'
import type { Session } from '../session.ts'
import { inputSchemaOf } from './api-tools.ts'
import { createDispatcher } from './dispatch.ts'

/** One hands tool in the AI SDK: its `execute` resolves to the session's outcome. */
export type AiSdkTool = Tool<unknown, CallOutcome>

/** The enabled hands tools keyed by name; pass as `tools` to `generateText` / `streamText`. */
export type AiSdkToolSet = Record<string, AiSdkTool>

/**
 * The session's tools as an AI SDK `ToolSet`, built with `tool()` and `jsonSchema()` from the
 * same description and input schema the other APIs are sent. Each `execute` calls the session
 * (read-only calls of one step overlap, the rest run in call order) and resolves to the outcome,
 * never rejecting for a tool failure; the model reads the rendered text, and a failure as
 * `error-text`. `strict` is false for the reason given on the Responses tools.
 */
export function createAiSdkTools(session: Session): AiSdkToolSet {
  const dispatch = createDispatcher(session)
  return Object.fromEntries(
    session.tools.map((t) => [
      t.name,
      // Type arguments inferred: `tool()` takes <INPUT, OUTPUT> in ai 6 and <INPUT, OUTPUT, CONTEXT> in ai 7.
      tool({
        title: t.title,
        description: t.description,
        inputSchema: jsonSchema(inputSchemaOf(t) as JSONSchema7),
        strict: false,
        execute: (input) => dispatch.call(t.name, input),
        toModelOutput: ({ output }) => ({ type: output.ok ? 'text' : 'error-text', value: dispatch.text(output) }),
      }),
    ]),
  )
}

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { generateText, stepCountIs } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { afterEach, describe, expect, it } from 'vitest'
import { createAiSdkTools } from '@hands/surface/ai-sdk'
import { CALLS, EXPECTED, FINAL, PROMPT, committedTools, openSession } from './scenario.ts'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
}

describe('AI SDK adapter', () => {
  it('is a ToolSet keyed by tool name, built from the same definitions as the other APIs', () => {
    const { session, close } = openSession()
    cleanups.push(close)
    const tools = createAiSdkTools(session)
    expect(Object.keys(tools)).toEqual(session.tools.map((t) => t.name))
    const chat = committedTools('openai') as Array<{ function: { name: string; description: string; parameters: unknown } }>
    for (const { function: f } of chat) {
      const t = tools[f.name] as { description?: string; inputSchema: { jsonSchema: unknown }; strict?: boolean }
      expect(t.description).toBe(f.description)
      expect(t.inputSchema.jsonSchema).toEqual(f.parameters)
      expect(t.strict).toBe(false)
    }
  })

  it('runs the calls of one step through a real session and gives the model their results in call order, failures as error-text', async () => {
    const { session, dir, close } = openSession()
    cleanups.push(close)
    const model = new MockLanguageModelV3({
      doGenerate: [
        {
          content: CALLS.map((c) => ({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: c.arguments })),
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage,
          warnings: [],
        },
        { content: [{ type: 'text', text: FINAL }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
      ],
    })

    const result = await generateText({ model, tools: createAiSdkTools(session), prompt: PROMPT, stopWhen: stepCountIs(5) })

    expect(result.text).toBe(FINAL)
    expect(model.doGenerateCalls).toHaveLength(2)
    const sent = model.doGenerateCalls[0]?.tools
    expect(sent).toEqual(
      (committedTools('openai') as Array<{ function: { name: string; description: string; parameters: unknown } }>).map(({ function: f }) => ({
        type: 'function',
        name: f.name,
        description: f.description,
        inputSchema: f.parameters,
        strict: false,
      })),
    )
    // The second call's prompt ends with one tool message carrying every result in call order.
    const prompt = model.doGenerateCalls[1]?.prompt ?? []
    const toolMessage = prompt.at(-1) as { role: string; content: Array<{ type: string; toolCallId: string; toolName: string; output: unknown }> }
    expect(toolMessage.role).toBe('tool')
    // The SDK parses arguments itself: cut-off JSON never reaches execute and comes back as the SDK's own error-text
    // (ai 7 prefixes the error class names).
    const texts = EXPECTED.map((e, i) =>
      CALLS[i]!.id === 'call_4'
        ? {
            type: 'error-text',
            value: expect.stringMatching(/^(AI_InvalidToolInputError: )?Invalid input for tool file_exists: (AI_JSONParseError: )?JSON parsing failed/),
          }
        : { type: e.isError ? 'error-text' : 'text', value: e.text },
    )
    expect(toolMessage.content).toEqual(CALLS.map((c, i) => ({ type: 'tool-result', toolCallId: c.id, toolName: c.name, output: texts[i] })))
    // What execute resolved to: the session's outcomes.
    const outcomes = result.steps[0]?.toolResults.map((r) => r.output as { ok: boolean; tool: string })
    expect(outcomes?.map((o) => [o.tool, o.ok])).toEqual([
      ['shell_run', true],
      ['copy', true],
      ['copy', false],
      ['file_exists', true],
    ])
    expect(readFileSync(join(dir, 'b.txt'), 'utf8')).toBe('hello')
  })
})

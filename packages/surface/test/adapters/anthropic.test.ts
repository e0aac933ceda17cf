import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import Anthropic from '@anthropic-ai/sdk'
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages'
import { afterEach, describe, expect, it } from 'vitest'
import { createMessagesAdapter } from '@hands/surface/anthropic'
import { CALLS, EXPECTED, FINAL, PROMPT, committedTools, fakeFetch, openSession } from './scenario.ts'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

const message = (id: string, content: unknown[], stop: string) => ({
  id,
  type: 'message',
  role: 'assistant',
  model: 'claude-test',
  content,
  stop_reason: stop,
  stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 1 },
})

// Anthropic sends tool input already parsed; the cut-off JSON call becomes an input that breaks the schema.
const INPUTS: unknown[] = CALLS.map((c) => (c.id === 'call_4' ? { paths: [] } : JSON.parse(c.arguments)))
const TEXTS = EXPECTED.map((e, i) =>
  CALLS[i]!.id === 'call_4'
    ? expect.stringMatching(
        /^invalid_input: file_exists: `paths` must not have fewer than 1 items \(got \[\]\) — `paths`: an array of non-empty strings with at least 1 item$/,
      )
    : e.text,
)

describe('Anthropic Messages adapter', () => {
  it('sends the committed tools, runs the tool_use blocks through a real session and sends tool_result blocks with is_error in call order', async () => {
    const { session, dir, close } = openSession()
    cleanups.push(close)
    const content = [
      { type: 'text', text: 'On it.', citations: null },
      ...CALLS.map((c, i) => ({ type: 'tool_use', id: c.id, name: c.name, input: INPUTS[i], caller: { type: 'direct' } })),
    ]
    const { fetch, requests } = fakeFetch([
      message('msg_1', content, 'tool_use'),
      message('msg_2', [{ type: 'text', text: FINAL, citations: null }], 'end_turn'),
    ])
    const anthropic = new Anthropic({ apiKey: 'test', baseURL: 'http://anthropic.test', fetch, maxRetries: 0 })
    const hands = createMessagesAdapter(session)

    const messages: MessageParam[] = [{ role: 'user', content: PROMPT }]
    for (let turn = 0; turn < 5; turn++) {
      const response = await anthropic.messages.create({ model: 'claude-test', max_tokens: 1024, messages, tools: hands.tools })
      messages.push({ role: 'assistant', content: response.content })
      if (response.stop_reason !== 'tool_use') break
      messages.push(await hands.handle(response.content))
    }

    expect(requests).toHaveLength(2)
    expect(requests[0]).toEqual({
      url: 'http://anthropic.test/v1/messages',
      method: 'POST',
      body: { model: 'claude-test', max_tokens: 1024, messages: [{ role: 'user', content: PROMPT }], tools: committedTools('anthropic') },
    })
    expect(requests[1]?.body).toEqual({
      model: 'claude-test',
      max_tokens: 1024,
      messages: [
        { role: 'user', content: PROMPT },
        { role: 'assistant', content },
        {
          role: 'user',
          content: CALLS.map((c, i) => ({ type: 'tool_result', tool_use_id: c.id, content: TEXTS[i], is_error: EXPECTED[i]!.isError })),
        },
      ],
      tools: committedTools('anthropic'),
    })
    expect(messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: FINAL, citations: null }] })
    expect(readFileSync(join(dir, 'b.txt'), 'utf8')).toBe('hello')
  })
})

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import OpenAI from 'openai'
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions'
import { afterEach, describe, expect, it } from 'vitest'
import { createChatCompletionsAdapter } from '@hands/surface/openai'
import { CALLS, EXPECTED, FINAL, PROMPT, committedTools, fakeFetch, openSession } from './scenario.ts'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

const completion = (message: Record<string, unknown>, finish: string) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-test',
  choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
})

describe('Chat Completions adapter', () => {
  it('sends the committed tools, runs the calls of one message through a real session and sends their results back in call order', async () => {
    const { session, dir, close } = openSession()
    cleanups.push(close)
    const assistant = {
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: CALLS.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
    }
    const { fetch, requests } = fakeFetch([completion(assistant, 'tool_calls'), completion({ role: 'assistant', content: FINAL, refusal: null }, 'stop')])
    const openai = new OpenAI({ apiKey: 'test', baseURL: 'http://openai.test/v1', fetch, maxRetries: 0 })
    const hands = createChatCompletionsAdapter(session)

    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: PROMPT }]
    for (let turn = 0; turn < 5; turn++) {
      const response = await openai.chat.completions.create({ model: 'gpt-test', messages, tools: hands.tools })
      const message = response.choices[0]!.message
      messages.push(message)
      if (!message.tool_calls?.length) break
      messages.push(...(await hands.handle(message.tool_calls)))
    }

    expect(requests).toHaveLength(2)
    expect(requests[0]).toEqual({
      url: 'http://openai.test/v1/chat/completions',
      method: 'POST',
      body: { model: 'gpt-test', messages: [{ role: 'user', content: PROMPT }], tools: committedTools('openai') },
    })
    expect(requests[1]?.body).toEqual({
      model: 'gpt-test',
      messages: [{ role: 'user', content: PROMPT }, assistant, ...CALLS.map((c, i) => ({ role: 'tool', tool_call_id: c.id, content: EXPECTED[i]!.text }))],
      tools: committedTools('openai'),
    })
    expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: FINAL })
    expect(readFileSync(join(dir, 'b.txt'), 'utf8')).toBe('hello')
  })

  it('answers a custom tool call and an empty arguments string without throwing', async () => {
    const { session, close } = openSession()
    cleanups.push(close)
    const hands = createChatCompletionsAdapter(session)
    const replies = await hands.handle([
      { id: 'a', type: 'custom', custom: { name: 'grep', input: 'x' } },
      { id: 'b', type: 'function', function: { name: 'file_exists', arguments: '' } },
    ])
    expect(replies).toEqual([
      { role: 'tool', tool_call_id: 'a', content: expect.stringMatching(/^unknown_tool: there is no tool named "grep"/) },
      { role: 'tool', tool_call_id: 'b', content: expect.stringMatching(/^invalid_input: file_exists: `paths` is required/) },
    ])
    expect(await hands.handle(undefined)).toEqual([])
  })
})

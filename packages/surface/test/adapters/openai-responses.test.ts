import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import OpenAI from 'openai'
import type { ResponseInputItem } from 'openai/resources/responses/responses'
import { afterEach, describe, expect, it } from 'vitest'
import { createResponsesAdapter } from '@hands/surface/openai-responses'
import { CALLS, EXPECTED, FINAL, PROMPT, committedTools, fakeFetch, openSession } from './scenario.ts'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

const response = (id: string, output: unknown[]) => ({
  id,
  object: 'response',
  created_at: 1,
  status: 'completed',
  model: 'gpt-test',
  output,
  parallel_tool_calls: true,
  tool_choice: 'auto',
  tools: [],
})

describe('Responses adapter', () => {
  it('sends the committed tools with strict false, runs the function_call items through a real session and sends their outputs in call order', async () => {
    const { session, dir, close } = openSession()
    cleanups.push(close)
    const reasoning = { type: 'reasoning', id: 'rs_1', summary: [] }
    const calls = CALLS.map((c, i) => ({ type: 'function_call', id: `fc_${i}`, call_id: c.id, name: c.name, arguments: c.arguments, status: 'completed' }))
    const message = { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: FINAL, annotations: [] }] }
    const { fetch, requests } = fakeFetch([response('resp_1', [reasoning, ...calls]), response('resp_2', [message])])
    const openai = new OpenAI({ apiKey: 'test', baseURL: 'http://openai.test/v1', fetch, maxRetries: 0 })
    const hands = createResponsesAdapter(session)

    let input: ResponseInputItem[] = [{ role: 'user', content: PROMPT }]
    let previous: string | undefined
    let text = ''
    for (let turn = 0; turn < 5; turn++) {
      const r = await openai.responses.create({ model: 'gpt-test', input, tools: hands.tools, ...(previous ? { previous_response_id: previous } : {}) })
      input = await hands.handle(r.output)
      previous = r.id
      text = r.output_text
      if (input.length === 0) break
    }

    expect(requests).toHaveLength(2)
    expect(requests[0]).toEqual({
      url: 'http://openai.test/v1/responses',
      method: 'POST',
      body: { model: 'gpt-test', input: [{ role: 'user', content: PROMPT }], tools: committedTools('openai-responses') },
    })
    for (const t of (requests[0]!.body as { tools: Array<{ strict: unknown }> }).tools) expect(t.strict).toBe(false)
    expect(requests[1]?.body).toEqual({
      model: 'gpt-test',
      previous_response_id: 'resp_1',
      input: CALLS.map((c, i) => ({ type: 'function_call_output', call_id: c.id, output: EXPECTED[i]!.text })),
      tools: committedTools('openai-responses'),
    })
    expect(text).toBe(FINAL)
    expect(readFileSync(join(dir, 'b.txt'), 'utf8')).toBe('hello')
  })
})

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createSurface, type CallInfo } from '@hands/surface'
import { createMessagesAdapter } from '@hands/surface/anthropic'
import { createChatCompletionsAdapter } from '@hands/surface/openai'
import { tempRoot } from '../helpers/tmp.ts'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

/** A real session whose beforeCall hook logs when each call starts and ends, holding it `ms` first. */
function timedSession(delayOf: (info: CallInfo) => number) {
  const root = tempRoot('hands-dispatch-')
  writeFileSync(join(root.dir, 'a.txt'), 'a\n')
  const log: string[] = []
  const label = (info: CallInfo) => `${info.tool}:${JSON.stringify(info.input['paths'] ?? info.input['dest'] ?? info.input['commands'])}`
  const session = createSurface({
    roots: [root.dir],
    beforeCall: async (info) => {
      log.push(`start ${label(info)}`)
      await new Promise((r) => setTimeout(r, delayOf(info)))
    },
    afterCall: (info) => void log.push(`end ${label(info)}`),
  })
  cleanups.push(root.remove, () => session.close())
  return { session, log }
}

const call = (id: string, name: string, input: unknown) => ({ id, type: 'function' as const, function: { name, arguments: JSON.stringify(input) } })

describe('parallel tool calls of one message', () => {
  it('run read-only calls together and every other call alone, in call order', async () => {
    const { session, log } = timedSession(() => 150)
    const hands = createChatCompletionsAdapter(session)
    const replies = await hands.handle([
      call('1', 'file_exists', { paths: ['a.txt'] }),
      call('2', 'file_exists', { paths: ['b.txt'] }),
      call('3', 'copy', { src: 'a.txt', dest: 'b.txt' }),
      call('4', 'file_exists', { paths: ['b.txt'] }),
      call('5', 'shell_run', { commands: ['cat b.txt'] }),
    ])
    expect(log.slice(0, 2).sort()).toEqual(['start file_exists:["a.txt"]', 'start file_exists:["b.txt"]'])
    expect(log.slice(2, 4).sort()).toEqual(['end file_exists:["a.txt"]', 'end file_exists:["b.txt"]'])
    expect(log.slice(4)).toEqual([
      'start copy:"b.txt"',
      'end copy:"b.txt"',
      'start file_exists:["b.txt"]',
      'end file_exists:["b.txt"]',
      'start shell_run:["cat b.txt"]',
      'end shell_run:["cat b.txt"]',
    ])
    expect(replies.map((r) => r.content.split('\n').at(-1))).toEqual(['exists a.txt', 'absent b.txt', 'copied a.txt → b.txt', 'exists b.txt', '  a'])
  })

  it('come back in call order when a later read-only call finishes first', async () => {
    const { session, log } = timedSession((info) => ((info.input['paths'] as string[])[0] === 'a.txt' ? 400 : 10))
    const hands = createMessagesAdapter(session)
    const reply = await hands.handle([
      { type: 'tool_use', id: 'slow', name: 'file_exists', input: { paths: ['a.txt'] } },
      { type: 'tool_use', id: 'fast', name: 'file_exists', input: { paths: ['c.txt'] } },
    ])
    expect(log.indexOf('end file_exists:["c.txt"]')).toBeLessThan(log.indexOf('end file_exists:["a.txt"]'))
    expect(reply.content.map((b) => [b.tool_use_id, b.content])).toEqual([
      ['slow', 'exists a.txt'],
      ['fast', 'absent c.txt'],
    ])
  })
})

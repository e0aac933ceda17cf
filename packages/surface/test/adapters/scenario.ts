import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect } from 'vitest'
import { createSurface, type Session } from '@hands/surface'
import { tempRoot } from '../helpers/tmp.ts'

const REPO = join(import.meta.dirname, '..', '..', '..', '..')

/** The tools of a committed `generated/no-code-tool/api/<format>.json`: what each SDK must be sent by a loop without a code tool. */
export function committedTools(format: string): unknown[] {
  return (JSON.parse(readFileSync(join(REPO, 'generated', 'no-code-tool', 'api', `${format}.json`), 'utf8')) as { tools: unknown[] }).tools
}

export const PROMPT = 'Write hello to a.txt, copy it to b.txt, and check that b.txt exists.'
export const FINAL = 'Done: b.txt holds hello.'

/**
 * The calls the model makes in one message, in order, with arguments as the model sends them
 * (JSON text). The second copy fails (the destination exists by then); one call's JSON is cut off.
 */
export const CALLS = [
  { id: 'call_1', name: 'shell_run', arguments: '{"commands":["printf hello > a.txt"]}' },
  { id: 'call_2', name: 'copy', arguments: '{"src":"a.txt","dest":"b.txt"}' },
  { id: 'call_3', name: 'copy', arguments: '{"src":"a.txt","dest":"b.txt"}' },
  { id: 'call_4', name: 'file_exists', arguments: '{"paths":["b.txt"' },
  { id: 'call_5', name: 'file_exists', arguments: '{"paths":["b.txt"]}' },
] as const

/** What the model must read back for each call, in call order, and whether it is a failure. */
export const EXPECTED = [
  { text: expect.stringMatching(/^exit 0 · \d+ ms · cwd \.\n\$ printf hello > a\.txt {2}\[exit 0 · \d+ ms\]$/), isError: false },
  { text: 'copied a.txt → b.txt', isError: false },
  { text: expect.stringMatching(/^destination_exists: dest "b\.txt" already exists\. — Pass is_overwrite: true/), isError: true },
  {
    text: expect.stringMatching(
      /^invalid_input: file_exists: the arguments are not valid JSON \(.+\) — Send the arguments as one JSON object: an object with required paths; nothing else\.$/,
    ),
    isError: true,
  },
  { text: 'exists b.txt', isError: false },
]

/** A real session rooted at a fresh temp directory, for a loop without a code tool (as in docs/adapters.md). */
export function openSession(): { session: Session; dir: string; close: () => Promise<void> } {
  const root = tempRoot('hands-adapter-')
  const session = createSurface({ roots: [root.dir], codeTool: null })
  return {
    session,
    dir: root.dir,
    close: async () => {
      await session.close()
      root.remove()
    },
  }
}

export interface RecordedRequest {
  url: string
  method: string
  body: unknown
}

/** A `fetch` that records each request and answers with the next scripted JSON reply. */
export function fakeFetch(replies: unknown[]): {
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>
  requests: RecordedRequest[]
} {
  const requests: RecordedRequest[] = []
  const queue = [...replies]
  return {
    requests,
    fetch: async (input, init) => {
      const url = input instanceof Request ? input.url : String(input)
      requests.push({ url, method: init?.method ?? 'GET', body: JSON.parse(String(init?.body)) })
      const reply = queue.shift()
      if (reply === undefined) return new Response(JSON.stringify({ error: { type: 'test', message: 'no scripted reply left' } }), { status: 400 })
      return new Response(JSON.stringify(reply), { status: 200, headers: { 'content-type': 'application/json' } })
    },
  }
}

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterEach, describe, expect, it } from 'vitest'
import { serveHttp } from '@hands/surface'
import { structured } from './helpers/mcp.ts'
import { jsonRpc } from './helpers/serve.ts'
import { tempRoot } from './helpers/tmp.ts'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

/** A server and an SDK client whose fetch records, per JSON-RPC method POSTed, the Content-Type of the answer. */
async function recorded() {
  const root = tempRoot()
  cleanups.push(root.remove)
  const running = await serveHttp({ host: '127.0.0.1', port: 0 }, { roots: [root.dir] })
  cleanups.push(() => running.close())
  const answers: Array<{ method: string; type: string | null; length: string | null }> = []
  const recording: typeof fetch = async (input, init) => {
    const res = await fetch(input, init)
    if (init?.method === 'POST' && typeof init.body === 'string') {
      const method = (JSON.parse(init.body) as { method?: string }).method ?? 'response'
      answers.push({ method, type: res.headers.get('content-type'), length: res.headers.get('content-length') })
    }
    return res
  }
  const transport = new StreamableHTTPClientTransport(new URL(running.url), { fetch: recording })
  const client = new Client({ name: 'hands-bridge-test', version: '0.0.0' })
  await client.connect(transport)
  cleanups.push(() => client.close())
  return { running, client, transport, answers }
}

/** POST `message` on session `sessionId` with plain fetch; the response as it arrives. */
function onSession(url: string, sessionId: string, message: unknown, version = '2025-06-18'): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': version,
    },
    body: JSON.stringify(message),
  })
}

describe('hands serve --http: how answers travel', () => {
  it('answers a call whose result is all it sends as one application/json body with a Content-Length', async () => {
    const { client, answers } = await recorded()
    expect(structured(await client.callTool({ name: 'file_exists', arguments: { paths: ['.'] } }))).toEqual({ paths: [{ path: '.', is_exists: true }] })
    const call = answers.find((a) => a.method === 'tools/call')
    expect(call?.type).toBe('application/json')
    expect(Number(call?.length)).toBeGreaterThan(0)
    // initialize is answered the same way.
    expect(answers.find((a) => a.method === 'initialize')?.type).toBe('application/json')
  })

  it('keeps an SSE stream for an answer of more than one message (a batch), every message on it', async () => {
    const { running, transport } = await recorded()
    const call = (id: number, path: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'file_exists', arguments: { paths: [path] } } })
    // Batches were dropped from the protocol in 2025-06-18; the SDK's transport still takes them under 2025-03-26.
    const res = await onSession(running.url, transport.sessionId as string, [call(1, '.'), call(2, 'missing')], '2025-03-26')
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    const events = (await res.text()).split('\n\n').filter((e) => e.includes('data: '))
    const messages = events.map((e) => jsonRpc(e) as { id: number; result: { structuredContent: unknown } })
    expect(messages.map((m) => [m.id, m.result.structuredContent]).sort()).toEqual([
      [1, { paths: [{ path: '.', is_exists: true }] }],
      [2, { paths: [{ path: 'missing', is_exists: false }] }],
    ])
  })

  it('sends the SSE headers of a call still running after a second, before its result', async () => {
    const { running, client, transport } = await recorded()
    await client.callTool({ name: 'shell_run', arguments: { commands: ['true'] } })
    const started = performance.now()
    const res = await onSession(running.url, transport.sessionId as string, {
      jsonrpc: '2.0',
      id: 77,
      method: 'tools/call',
      params: { name: 'shell_run', arguments: { commands: ['sleep 3; echo done'] } },
    })
    const headersAt = performance.now() - started
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    const text = await res.text()
    const doneAt = performance.now() - started
    expect(doneAt).toBeGreaterThanOrEqual(2900)
    // The headers came about a second in, well before the result (a generous margin for a loaded machine).
    expect(doneAt - headersAt).toBeGreaterThan(700)
    expect(jsonRpc(text)).toMatchObject({ id: 77, result: { structuredContent: { commands: [{ stdout: 'done\n', exit: 0 }] } } })
  }, 30_000)
})

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { serveHttp, type HttpServeOptions } from '@hands/surface'
import { structured } from './helpers/mcp.ts'
import { eventually, processesMentioning } from './helpers/procs.ts'
import { INITIALIZE, jsonRpc, post } from './helpers/serve.ts'
import { tempRoot } from './helpers/tmp.ts'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

/** A server and an SDK client whose fetch records, per JSON-RPC method POSTed, the Content-Type of the answer. */
async function recorded(listen: Partial<HttpServeOptions> = {}) {
  const root = tempRoot()
  cleanups.push(root.remove)
  const running = await serveHttp({ host: '127.0.0.1', port: 0, ...listen }, { roots: [root.dir] })
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
  return { running, client, transport, answers, root: root.dir }
}

/** A session opened with plain fetch (no standalone GET stream, unlike the SDK client); its id. */
async function rawSession(url: string, capabilities: Record<string, unknown> = {}): Promise<string> {
  const init = await post(url, JSON.stringify({ ...INITIALIZE, params: { ...INITIALIZE.params, capabilities } }))
  const id = init.headers.get('mcp-session-id') as string
  await post(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), sessionHeaders(id))
  return id
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

const sessionHeaders = (sessionId: string, version = '2025-06-18') => ({ 'mcp-session-id': sessionId, 'mcp-protocol-version': version })

/** Read an SSE answer as it arrives: `next(what)` resolves to everything read so far once it holds `what`. */
function sseReader(res: Response): (what: string) => Promise<string> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let text = ''
  return async (what) => {
    while (!text.includes(what)) {
      const chunk = await reader.read()
      if (chunk.done) throw new Error(`the stream ended before ${what}: ${text}`)
      text += decoder.decode(chunk.value)
    }
    return text
  }
}

/** A server whose host root holds `client-root` (with a file `marker` only there), for a client to offer. */
async function servedWithClientRoot() {
  const host = tempRoot()
  cleanups.push(host.remove)
  const offered = join(host.dir, 'client-root')
  mkdirSync(offered)
  // Only in the client's root: found by a relative path only where that root is the workspace.
  writeFileSync(join(offered, 'marker'), '')
  const running = await serveHttp({ host: '127.0.0.1', port: 0 }, { roots: [host.dir] })
  cleanups.push(() => running.close())
  return { running, offered }
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
    // Not at once: a call's answer waits a second for a lone result before it turns SSE.
    expect(headersAt).toBeGreaterThan(800)
    const text = await res.text()
    const doneAt = performance.now() - started
    expect(doneAt).toBeGreaterThanOrEqual(2900)
    // The headers came about a second in, well before the result (a generous margin for a loaded machine).
    expect(doneAt - headersAt).toBeGreaterThan(700)
    expect(jsonRpc(text)).toMatchObject({ id: 77, result: { structuredContent: { commands: [{ stdout: 'done\n', exit: 0 }] } } })
  }, 120_000)

  it('keeps an idle connection open for a minute, so a client calling every few seconds does not reconnect each time', async () => {
    const { running, transport } = await recorded()
    const res = await post(running.url, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }), sessionHeaders(transport.sessionId as string))
    expect(res.headers.get('keep-alive')).toBe('timeout=60')
  })

  it('answers a POST of notifications only with 202 and no body', async () => {
    const { running, transport } = await recorded()
    const res = await post(running.url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), sessionHeaders(transport.sessionId as string))
    expect(res.status).toBe(202)
    expect(res.text).toBe('')
  })

  it('refuses what is not a JSON-RPC message, an empty or oversized batch, and a second initialize with 400, naming what was wrong', async () => {
    const { running, client, transport } = await recorded()
    const headers = sessionHeaders(transport.sessionId as string, '2025-03-26')
    const notMessage = await post(running.url, JSON.stringify({ hello: 'world' }), headers)
    expect(notMessage.status).toBe(400)
    expect(jsonRpc(notMessage.text).error).toMatchObject({ code: -32600, message: expect.stringContaining('the body is not a JSON-RPC 2.0 message') })
    const badInBatch = await post(
      running.url,
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { jsonrpc: '1.0', id: 2, method: 'ping' },
      ]),
      headers,
    )
    expect(jsonRpc(badInBatch.text).error?.message).toContain('message 1 of the batch')
    const empty = await post(running.url, '[]', headers)
    expect(empty.status).toBe(400)
    expect(jsonRpc(empty.text).error?.message).toContain('a batch holds 1 to 100 messages, this one 0')
    const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' })
    const big = await post(running.url, JSON.stringify(Array.from({ length: 101 }, (_, i) => ping(i))), headers)
    expect(jsonRpc(big.text).error?.message).toContain('this one 101')
    const again = await post(
      running.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '0' } },
      }),
      headers,
    )
    expect(again.status).toBe(400)
    expect(jsonRpc(again.text)).toMatchObject({ id: 9, error: { code: -32600, message: expect.stringContaining('already initialized') } })
    // None of it touched the session.
    expect((await client.listTools()).tools).toHaveLength(10)
  })

  it('refuses an unsupported MCP-Protocol-Version with 400 naming the versions it speaks', async () => {
    const { running, transport } = await recorded()
    const res = await post(running.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), sessionHeaders(transport.sessionId as string, '1999-01-01'))
    expect(res.status).toBe(400)
    expect(jsonRpc(res.text).error?.message).toMatch(/unsupported MCP-Protocol-Version "1999-01-01"; this server speaks .*2025-06-18/)
  })

  it('keeps one GET stream per session (409 for a second, 406 without text/event-stream) and sends the server log on it', async () => {
    const { running, client, transport } = await recorded()
    const id = transport.sessionId as string
    // The SDK client opens its GET stream without waiting for it; with the client closed, the
    // server sees that stream end a moment later, and a GET of our own gets the session's stream.
    await client.close()
    const open = () => fetch(running.url, { headers: { accept: 'text/event-stream', ...sessionHeaders(id) } })
    let own = await open()
    for (let i = 0; i < 100 && own.status !== 200; i++) {
      await own.body?.cancel()
      await new Promise((r) => setTimeout(r, 50))
      own = await open()
    }
    expect(own.status).toBe(200)
    expect(own.headers.get('content-type')).toBe('text/event-stream')
    const second = await open()
    expect(second.status).toBe(409)
    expect(((await second.json()) as { error: { message: string } }).error.message).toContain('one is allowed per session')
    const notSse = await fetch(running.url, { headers: { accept: 'application/json', ...sessionHeaders(id) } })
    expect(notSse.status).toBe(406)
    await notSse.body?.cancel()
    const logs: string[] = []
    const reader = (own.body as ReadableStream<Uint8Array>).getReader()
    await post(running.url, JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'logging/setLevel', params: { level: 'debug' } }), sessionHeaders(id))
    await post(
      running.url,
      JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'delete', arguments: { paths: ['/'] } } }),
      sessionHeaders(id),
    )
    const decoder = new TextDecoder()
    while (!logs.join('').includes('notifications/message')) {
      const chunk = await reader.read()
      if (chunk.done) break
      logs.push(decoder.decode(chunk.value))
    }
    await reader.cancel()
    expect(logs.join('')).toContain('"method":"notifications/message"')
  })

  it('ends a call still running when its session is deleted: the call is answered with an error and its command stopped', async () => {
    const { running, client, transport, root } = await recorded()
    const id = transport.sessionId as string
    const call = post(
      running.url,
      JSON.stringify({ jsonrpc: '2.0', id: 41, method: 'tools/call', params: { name: 'shell_run', arguments: { commands: ['sleep 120'] } } }),
      sessionHeaders(id),
    )
    // The command's processes work in the root: the sleep itself is among them.
    const sleeping = () => processesMentioning(root).filter((p) => p.cmd === 'sleep 120')
    expect(await eventually(() => sleeping().length > 0, 10_000)).toBe(true)
    const started = performance.now()
    const deleted = await fetch(running.url, { method: 'DELETE', headers: sessionHeaders(id) })
    expect(deleted.status).toBe(200)
    const answer = await call
    expect(performance.now() - started).toBeLessThan(15_000)
    expect(jsonRpc(answer.text)).toMatchObject({
      id: 41,
      error: { code: -32001, message: expect.stringContaining('the session ended before this request was answered') },
    })
    expect(await eventually(() => processesMentioning(root).length === 0)).toBe(true)
    await client.close()
  }, 120_000)

  it('lets go of a call whose client left: the session goes on serving, then idles out', async () => {
    const { running } = await recorded({ sessionIdleMs: 1500 })
    const id = await rawSession(running.url)
    const left = new AbortController()
    const call = fetch(running.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...sessionHeaders(id) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 42, method: 'tools/call', params: { name: 'shell_run', arguments: { commands: ['sleep 0.5'] } } }),
      signal: left.signal,
    })
    setTimeout(() => left.abort(), 100)
    await expect(call).rejects.toThrow()
    await new Promise((r) => setTimeout(r, 800))
    const later = await post(
      running.url,
      JSON.stringify({ jsonrpc: '2.0', id: 43, method: 'tools/call', params: { name: 'file_exists', arguments: { paths: ['.'] } } }),
      sessionHeaders(id),
    )
    expect(jsonRpc(later.text)).toMatchObject({ id: 43, result: { structuredContent: { paths: [{ path: '.', is_exists: true }] } } })
    // The left answer holds the session open no longer: with no request, it expires.
    expect(running.sessions()).toContain(id)
    expect(await eventually(() => !running.sessions().includes(id), 10_000)).toBe(true)
  })

  it('ends the answer of a call the client cancelled, so the session can idle out', async () => {
    const { running, root, transport } = await recorded({ sessionIdleMs: 1500 })
    // Only the session under test runs anything under the root: the recorder's (whose shell
    // runtime started once it was initialized) ends now.
    await transport.terminateSession()
    const id = await rawSession(running.url)
    const call = post(
      running.url,
      JSON.stringify({ jsonrpc: '2.0', id: 44, method: 'tools/call', params: { name: 'shell_run', arguments: { commands: ['sleep 20'] } } }),
      sessionHeaders(id),
    )
    expect(await eventually(() => processesMentioning(root).some((p) => p.cmd === 'sleep 20'), 10_000)).toBe(true)
    const cancel = await post(
      running.url,
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 44, reason: 'the user gave up' } }),
      sessionHeaders(id),
    )
    expect(cancel.status).toBe(202)
    const started = performance.now()
    const answer = await call
    // Well before the command's 20 s: the answer ended when the call was cancelled.
    expect(performance.now() - started).toBeLessThan(10_000)
    expect(jsonRpc(answer.text === '' ? 'null' : answer.text)).toBeNull()
    // The session expires, and its command stops with it.
    expect(await eventually(() => !running.sessions().includes(id), 15_000)).toBe(true)
    expect(await eventually(() => processesMentioning(root).length === 0), JSON.stringify(processesMentioning(root))).toBe(true)
  }, 120_000)

  it('takes the roots of an SDK client at once, though it opens its GET stream only after the server asked for them', async () => {
    const { running, offered } = await servedWithClientRoot()
    const client = new Client({ name: 'hands-roots-test', version: '0.0.0' }, { capabilities: { roots: { listChanged: true } } })
    let asked = 0
    client.setRequestHandler(ListRootsRequestSchema, () => {
      asked++
      return { roots: [{ uri: pathToFileURL(offered).href }] }
    })
    const started = performance.now()
    await client.connect(new StreamableHTTPClientTransport(new URL(running.url)))
    cleanups.push(() => client.close())
    const result = structured(await client.callTool({ name: 'file_exists', arguments: { paths: ['marker'] } }))
    // The first call ran in the client's root, not after the 10 s the server waits for an answer.
    expect(asked).toBe(1)
    expect(result).toEqual({ paths: [{ path: 'marker', is_exists: true }] })
    expect(performance.now() - started).toBeLessThan(8000)
  })

  it('asks a client without a GET stream for its roots on the stream of its first call', async () => {
    const { running, offered } = await servedWithClientRoot()
    const id = await rawSession(running.url, { roots: {} })
    const res = await onSession(running.url, id, {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'file_exists', arguments: { paths: ['marker'] } },
    })
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    const next = sseReader(res)
    const ask = jsonRpc(await next('roots/list')) as { id: number; method?: string }
    expect(ask.method).toBe('roots/list')
    const answered = await post(
      running.url,
      JSON.stringify({ jsonrpc: '2.0', id: ask.id, result: { roots: [{ uri: pathToFileURL(offered).href }] } }),
      sessionHeaders(id),
    )
    expect(answered.status).toBe(202)
    expect(await next('"id":7')).toContain('"path":"marker","is_exists":true')
  })

  it('asks for a confirmation on the stream of the call that asks, so a client without a GET stream gets it', async () => {
    const { running, root } = await recorded()
    writeFileSync(join(root, 'doomed.txt'), 'x')
    const id = await rawSession(running.url, { elicitation: {} })
    const res = await fetch(running.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...sessionHeaders(id) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 45, method: 'tools/call', params: { name: 'delete', arguments: { paths: ['doomed.txt'] } } }),
    })
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    const next = sseReader(res)
    const ask = jsonRpc(await next('elicitation/create')) as { id: number; method?: string }
    const answered = await post(
      running.url,
      JSON.stringify({ jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { confirm: true } } }),
      sessionHeaders(id),
    )
    expect(answered.status).toBe(202)
    expect(await next('"id":45')).toContain('"is_deleted":true')
    expect(existsSync(join(root, 'doomed.txt'))).toBe(false)
  })
})

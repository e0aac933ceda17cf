import type { IncomingMessage, ServerResponse } from 'node:http'
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'

/** A POST answer that has sent nothing for this long goes out as an SSE stream with its headers on their own, so a client waiting on a long tool call sees the answer begin. */
const HEADERS_AFTER_MS = 1000

type Chunk = { done: true; value?: undefined } | { done: false; value: Uint8Array }
const PENDING = Symbol('pending')

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.on('drain', done)
    res.on('close', done)
  })
}

/** The JSON of one SSE `message` event as the SDK writes it (`event: message`, an optional `id:`, one `data:` line), or null for anything else. */
function eventJson(chunk: Uint8Array): string | null {
  const text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8')
  if (!text.endsWith('\n\n')) return null
  let data: string | null = null
  for (const line of text.slice(0, -2).split('\n')) {
    if (line === 'event: message' || line.startsWith('id: ')) continue
    if (!line.startsWith('data: ') || data !== null) return null
    data = line.slice(6)
  }
  return data
}

/**
 * Hand one HTTP request, whose body `body` is already parsed (undefined for GET and DELETE), to
 * the SDK's Web-standard transport and copy its answer to `res`. The transport sees a `Request`
 * with the request's method, URL and headers only: nothing reads the body again.
 *
 * A POST answered by a single message (the result, nothing sent before it) goes out as one
 * `application/json` body, which the transport spec allows for any request and which a client
 * reads without an event-stream parser. An answer with more (a progress or log notification, an
 * elicitation request, a batch) stays an SSE stream, its headers sent with its first event and
 * each event with the stream's end right behind it in one write. A POST answer silent for a
 * second, and every GET stream, gets its SSE headers at once. When the client goes away, the
 * answer's stream is cancelled.
 */
export async function bridgeRequest(
  transport: WebStandardStreamableHTTPServerTransport,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<void> {
  const headers = new Headers()
  const raw = req.rawHeaders
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string)
  const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers })
  const response = await transport.handleRequest(request, body === undefined ? undefined : { parsedBody: body })
  const head: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    head[name] = value
  })
  if (response.body === null || res.destroyed) {
    res.writeHead(response.status, head)
    res.end()
    return
  }
  const reader = response.body.getReader()
  res.once('close', () => {
    reader.cancel().catch(() => {})
  })
  const isEventStream = head['content-type'] === 'text/event-stream'
  const startStream = () => {
    if (res.headersSent) return
    res.writeHead(response.status, head)
    res.flushHeaders()
  }
  let early: NodeJS.Timeout | null = null
  if (req.method !== 'POST' || !isEventStream) startStream()
  else {
    early = setTimeout(startStream, HEADERS_AFTER_MS)
    early.unref()
  }
  try {
    let next: Promise<Chunk> = reader.read()
    for (let isFirst = true; ; isFirst = false) {
      const chunk = await next
      if (chunk.done || res.destroyed) break
      next = reader.read()
      if (isFirst && !res.headersSent && isEventStream) {
        if (early !== null) clearTimeout(early)
        early = null
        // The transport closes the stream in the same turn as it writes a lone result.
        const after = await Promise.race([next, new Promise<typeof PENDING>((resolve) => setImmediate(resolve, PENDING))])
        const json = after !== PENDING && after.done ? eventJson(chunk.value) : null
        if (json !== null) {
          const { 'cache-control': _cache, connection: _connection, 'x-accel-buffering': _buffering, ...rest } = head
          res.writeHead(response.status, { ...rest, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(json)) })
          res.end(json)
          return
        }
        res.writeHead(response.status, head)
      }
      // Held until the microtasks settle: an end that follows at once joins this write.
      res.cork()
      process.nextTick(() => res.uncork())
      if (!res.write(chunk.value)) await drained(res)
    }
  } catch {
    // the stream was cancelled (the client left)
  } finally {
    if (early !== null) clearTimeout(early)
  }
  if (!res.headersSent) res.writeHead(response.status, head)
  res.end()
}

import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js'
import { NOT_JSON_RPC } from './protocol-error.ts'
import { ErrorCode, JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js'

/** A POST answer that has sent nothing for this long gets its SSE headers on their own, so a client waiting on a long tool call sees the answer begin. */
const HEADERS_AFTER_MS = 1000
/** An open SSE stream gets a comment this often, so proxies and clients do not take it for dead. */
const KEEP_ALIVE_MS = 15_000
/** The most messages one POST may carry (a JSON-RPC batch, which protocol versions before 2025-06-18 allow). */
const MAX_BATCH = 100
/** Messages sent outside any request kept while the session has no GET stream; older ones are dropped. */
const UNSENT_MAX = 100

/** The Streamable HTTP transport's codes: a server error, and a session that is not (or no longer) open. */
export const SERVER_ERROR = -32000
export const SESSION_NOT_FOUND = -32001
const INVALID_REQUEST = ErrorCode.InvalidRequest

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' }

/** One response being written: a POST's answer to the requests it carried, or the session's GET stream. */
interface Stream {
  res: ServerResponse
  /** Requests answered on it that have no response yet (none for the GET stream). */
  pending: Set<RequestId>
  /** The SSE headers' deadline, then the keep-alive comments. */
  timer: NodeJS.Timeout | null
}

type Answer = { status: number; code: number; message: string }

const isResponse = (m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId } => !('method' in m)
type Request = JSONRPCMessage & { id: RequestId; method: string }
const isRequest = (m: JSONRPCMessage): m is Request => 'method' in m && 'id' in m
const isInitialize = (m: JSONRPCMessage): m is Request => isRequest(m) && m.method === 'initialize'

function event(message: JSONRPCMessage): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`
}

/** Whether `res` can still be written to (not ended, its client still there). */
const isOpen = (res: ServerResponse) => !res.writableEnded && !res.destroyed

/** Answer with HTTP `status` and a JSON-RPC error; `id` is kept when it is a request id (a client matches the error to its request by it). */
export function reply(res: ServerResponse, status: number, code: number, message: string, id: unknown = null, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: typeof id === 'string' || typeof id === 'number' ? id : null }))
}

const refuse = (res: ServerResponse, answer: Answer, id: unknown = null) => reply(res, answer.status, answer.code, answer.message, id)

/** Why a request's `MCP-Protocol-Version` header is refused, or null when it is absent or supported. */
function protocolVersion(req: IncomingMessage): Answer | null {
  const version = req.headers['mcp-protocol-version']
  if (version === undefined || (typeof version === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return null
  return {
    status: 400,
    code: SERVER_ERROR,
    message: `Bad Request: unsupported MCP-Protocol-Version ${JSON.stringify(version)}; this server speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`,
  }
}

/**
 * The JSON-RPC messages of a POST body, each checked against the JSON-RPC schema, or why they
 * are refused: a body is one message or a batch of 1 to 100, and an initialize comes alone.
 */
function messagesOf(body: unknown): JSONRPCMessage[] | Answer {
  const list = Array.isArray(body) ? body : [body]
  if (list.length === 0 || list.length > MAX_BATCH) {
    return { status: 400, code: INVALID_REQUEST, message: `Invalid Request: a batch holds 1 to ${MAX_BATCH} messages, this one ${list.length}` }
  }
  const messages: JSONRPCMessage[] = []
  for (const [i, item] of list.entries()) {
    const parsed = JSONRPCMessageSchema.safeParse(item)
    if (!parsed.success) {
      const which = Array.isArray(body) ? `message ${i} of the batch` : 'the body'
      return {
        status: 400,
        code: INVALID_REQUEST,
        message: `Invalid Request: ${which} ${NOT_JSON_RPC}`,
      }
    }
    messages.push(parsed.data)
  }
  if (messages.length > 1 && messages.some(isInitialize)) {
    return { status: 400, code: INVALID_REQUEST, message: 'Invalid Request: initialize must be sent alone, not in a batch' }
  }
  return messages
}

export interface HttpTransportOptions {
  /** The new session's id, made when its initialize arrives. */
  sessionId: () => string
  /** Called with the id once the session's initialize is accepted, before it is answered. */
  onSessionInitialized?: (id: string) => void
}

/**
 * One MCP session over Streamable HTTP, on node:http: the server side of the transport spec for
 * a session the front door (`http.ts`) has already checked (Host, Origin, path, method,
 * Content-Type and Accept of a POST, its size and its JSON, the session id).
 *
 * A POST of notifications and responses only is answered 202. A POST carrying requests is
 * answered when they are: a lone result with nothing sent before it goes out as one
 * `application/json` body (which a client reads without an event-stream parser); anything more
 * (a progress or log notification, an elicitation request, a batch) makes it an SSE stream, each
 * message an event, ended with the last response. A POST answer silent for a second gets its
 * SSE headers then. The GET stream carries what the server sends outside any request; sent
 * while none is open, it waits for one (the last UNSENT_MAX messages), and a request among it (the
 * session asks for the client's roots as soon as it is initialized, before a client opens its GET
 * stream) goes out on the next POST that carries requests, so a client without a GET stream is
 * asked too. DELETE ends the session. Messages for a stream whose client left are dropped.
 */
export class HttpTransport implements Transport {
  sessionId?: string
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: Transport['onmessage']

  readonly #options: HttpTransportOptions
  /** The stream each unanswered request is answered on. */
  readonly #byRequest = new Map<RequestId, Stream>()
  /** Every stream still open, so closing the session ends them all. */
  readonly #streams = new Set<Stream>()
  #standalone: Stream | null = null
  /** What the server sent outside any request while no GET stream was open, oldest first. */
  readonly #unsent: JSONRPCMessage[] = []
  #isClosed = false

  constructor(options: HttpTransportOptions) {
    this.#options = options
  }

  async start(): Promise<void> {}

  /** Answer one request of this session; `body` is a POST's parsed JSON (undefined for GET and DELETE). */
  handle(req: IncomingMessage, res: ServerResponse, body: unknown): void {
    const refused = this.#isClosed
      ? { status: 404, code: SESSION_NOT_FOUND, message: 'Session not found: it has ended; start a new one with initialize' }
      : req.method === 'POST'
        ? null
        : protocolVersion(req)
    if (refused !== null) refuse(res, refused)
    else if (req.method === 'POST') this.#post(req, res, body)
    else if (req.method === 'GET') this.#get(req, res)
    else {
      res.writeHead(200).end()
      void this.close()
    }
  }

  #post(req: IncomingMessage, res: ServerResponse, body: unknown) {
    const messages = messagesOf(body)
    if (!Array.isArray(messages)) return refuse(res, messages, (body as { id?: unknown } | null)?.id)
    const first = messages[0] as JSONRPCMessage
    if (isInitialize(first)) {
      if (this.sessionId !== undefined) {
        return refuse(res, { status: 400, code: INVALID_REQUEST, message: `Invalid Request: session ${this.sessionId} is already initialized` }, first.id)
      }
      this.sessionId = this.#options.sessionId()
      this.#options.onSessionInitialized?.(this.sessionId)
    } else {
      const refused = protocolVersion(req)
      if (refused !== null) return refuse(res, refused)
    }
    const extra = { requestInfo: { headers: req.headers } }
    const requests = messages.filter(isRequest)
    if (requests.length === 0) {
      res.writeHead(202).end()
      for (const m of messages) {
        this.#cancelled(m)
        this.onmessage?.(m, extra)
      }
      return
    }
    const stream = this.#open(res, new Set(requests.map((r) => r.id)))
    for (const id of stream.pending) this.#byRequest.set(id, stream)
    stream.timer = setTimeout(() => this.#startSse(stream), HEADERS_AFTER_MS)
    stream.timer.unref()
    // Requests of the server still waiting for a GET stream go out here (the client answers by POST).
    const asks = this.#unsent.filter(isRequest)
    if (asks.length > 0) {
      this.#startSse(stream)
      for (const m of asks) {
        this.#unsent.splice(this.#unsent.indexOf(m), 1)
        res.write(event(m))
      }
    }
    for (const m of messages) {
      this.#cancelled(m)
      this.onmessage?.(m, extra)
    }
  }

  #get(req: IncomingMessage, res: ServerResponse) {
    if (!(req.headers.accept ?? '').includes('text/event-stream')) {
      return refuse(res, { status: 406, code: SERVER_ERROR, message: 'Not Acceptable: a GET opens an SSE stream; Accept must list text/event-stream' })
    }
    if (this.#standalone !== null) {
      return refuse(res, { status: 409, code: SERVER_ERROR, message: 'Conflict: this session already has its GET stream open; one is allowed per session' })
    }
    this.#standalone = this.#open(res, new Set())
    this.#startSse(this.#standalone)
    for (const m of this.#unsent.splice(0)) res.write(event(m))
  }

  #open(res: ServerResponse, pending: Set<RequestId>): Stream {
    const stream: Stream = { res, pending, timer: null }
    this.#streams.add(stream)
    res.once('close', () => this.#drop(stream))
    return stream
  }

  /**
   * A request the client cancelled gets no response (the protocol drops it), so its stream stops
   * waiting for one; a stream left with nothing to wait for ends.
   */
  #cancelled(message: JSONRPCMessage) {
    if (!('method' in message) || message.method !== 'notifications/cancelled') return
    const id = (message.params as { requestId?: RequestId } | undefined)?.requestId
    const stream = id === undefined ? undefined : this.#byRequest.get(id)
    if (id === undefined || stream === undefined) return
    this.#byRequest.delete(id)
    stream.pending.delete(id)
    if (stream.pending.size > 0 || !isOpen(stream.res)) return
    if (!stream.res.headersSent) stream.res.writeHead(202)
    stream.res.end()
  }

  /** Send a stream's SSE headers now, if it has sent nothing yet (a POST's lone result can still go out as one JSON body until then). */
  #startSse(stream: Stream) {
    if (stream.res.headersSent || !isOpen(stream.res)) return
    if (stream.timer !== null) clearTimeout(stream.timer)
    stream.timer = setInterval(() => isOpen(stream.res) && stream.res.write(': keepalive\n\n'), KEEP_ALIVE_MS)
    stream.timer.unref()
    stream.res.writeHead(200, this.#headers(SSE_HEADERS))
    stream.res.flushHeaders()
  }

  #headers(base: Record<string, string>): Record<string, string> {
    return this.sessionId === undefined ? base : { ...base, 'mcp-session-id': this.sessionId }
  }

  /** Forget a stream whose response closed (answered, or the client left). */
  #drop(stream: Stream) {
    if (stream.timer !== null) clearTimeout(stream.timer)
    stream.timer = null
    this.#streams.delete(stream)
    if (this.#standalone === stream) this.#standalone = null
    for (const id of stream.pending) if (this.#byRequest.get(id) === stream) this.#byRequest.delete(id)
    stream.pending.clear()
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const id = isResponse(message) ? message.id : options?.relatedRequestId
    if (id === undefined) {
      // Sent outside any request: the GET stream carries it, or it waits for one.
      if (this.#standalone !== null && isOpen(this.#standalone.res)) this.#standalone.res.write(event(message))
      else if (!this.#isClosed && this.#unsent.push(message) > UNSENT_MAX) this.#unsent.shift()
      return
    }
    const stream = this.#byRequest.get(id)
    if (stream === undefined) return // its client left, the request was cancelled, or the session ended
    if (isResponse(message)) {
      stream.pending.delete(id)
      this.#byRequest.delete(id)
    }
    const { res } = stream
    if (!isOpen(res)) return
    if (stream.pending.size > 0) {
      this.#startSse(stream)
      res.write(event(message))
      return
    }
    // The last response of this POST: as the lone JSON body when nothing went before it.
    if (res.headersSent) return void res.end(event(message))
    const json = JSON.stringify(message)
    res.writeHead(200, this.#headers({ 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(json)) }))
    res.end(json)
  }

  /** End the session: every request still unanswered gets an error saying so, every stream ends. */
  async close(): Promise<void> {
    if (this.#isClosed) return
    this.#isClosed = true
    for (const id of [...this.#byRequest.keys()]) {
      await this.send({ jsonrpc: '2.0', id, error: { code: SESSION_NOT_FOUND, message: 'the session ended before this request was answered' } })
    }
    for (const stream of this.#streams) if (isOpen(stream.res)) stream.res.end()
    this.onclose?.()
  }
}

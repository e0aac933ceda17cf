import type { Readable, Writable } from 'node:stream'
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ErrorCode, JSONRPCMessageSchema, ListToolsRequestSchema, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js'
import type { AttachServer } from '../attach/server.ts'
import type { SurfaceOptions } from '../session.ts'
import { LineLimit } from './line-limit.ts'
import { NOT_JSON_RPC, onePage } from './protocol-error.ts'
import { newMcpServer, SERVED_METHODS } from './sdk-server.ts'
import type { HandsMcpServer } from './server.ts'
import { isStaticList, staticMcpTools } from './static-tools.ts'

/** The largest stdio message read: the SDK's own limit (10 MiB). */
export const MAX_STDIO_MESSAGE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE

/** Messages the SDK answers by itself: the handshake needs no tool. */
const HANDSHAKE = new Set(['initialize', 'notifications/initialized', 'ping'])
/** The code HTTP answers a request outside a session with (the transport's server error). */
const SERVER_ERROR = -32000

const isRequest = (m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId; method: string } => 'method' in m && 'id' in m

/** An id a client can match an error to, from a message that is JSON but not JSON-RPC; else null. */
function idOf(value: unknown): RequestId | null {
  const id = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as { id?: unknown }).id : undefined
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : null
}

/**
 * MCP over newline-delimited JSON: one message per line each way. A line that is not JSON is
 * answered with Parse error (-32700, id null), one that is JSON but no JSON-RPC message with
 * Invalid Request (-32600, its id when it has one); either way serving goes on (the SDK's own
 * transport answers neither).
 */
class StdioTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: Transport['onmessage']
  readonly #input: Readable
  readonly #output: Writable
  readonly #onBadLine: (why: string) => void

  constructor(input: Readable, output: Writable, onBadLine: (why: string) => void) {
    this.#input = input
    this.#output = output
    this.#onBadLine = onBadLine
  }

  async start(): Promise<void> {
    this.#input.on('data', this.#line)
  }

  /** One whole line (LineLimit passes lines whole, none over the limit). */
  readonly #line = (chunk: Buffer) => {
    const text = chunk.toString('utf8').trim()
    if (text === '') return
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (e) {
      this.#onBadLine(`a line that is not JSON (${(e as Error).message})`)
      void this.send({
        jsonrpc: '2.0',
        id: null,
        error: { code: ErrorCode.ParseError, message: `Parse error: the line is not JSON (${(e as Error).message}); send one JSON-RPC message per line` },
      } as never)
      return
    }
    const parsed = JSONRPCMessageSchema.safeParse(value)
    if (!parsed.success) {
      this.#onBadLine('a line that is not a JSON-RPC message')
      void this.send({
        jsonrpc: '2.0',
        id: idOf(value),
        error: { code: ErrorCode.InvalidRequest, message: `Invalid Request: the line ${NOT_JSON_RPC}` },
      } as never)
      return
    }
    this.onmessage?.(parsed.data)
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.#output.write(`${JSON.stringify(message)}\n`)) resolve()
      else this.#output.once('drain', resolve)
    })
  }

  async close(): Promise<void> {
    this.#input.off('data', this.#line)
    this.onclose?.()
  }
}

/**
 * Serve one session over stdio. stdout carries protocol only; logs go to stderr. A message over
 * 10 MiB is dropped as it arrives and answered with an Invalid Request error; the session goes
 * on. On stdin close, SIGINT or SIGTERM every shell is stopped and the process exits 0.
 *
 * As over HTTP, a session starts with one `initialize`: before it, only `ping` is answered (any
 * other request is refused, and notifications are dropped), and a second one is refused. A
 * method hands does not serve (such as `server/discover`) is answered Method not found at once.
 *
 * The server answers `initialize` on the MCP SDK alone, and `tools/list` from the tool list
 * codegen wrote (unless `--code-tool` names another code tool than the default or none); the tools (contracts, validators, runtimes)
 * load once the client has initialized, or as soon as it asks for anything else, and the login
 * environment is then captured in the background. Messages that need the tools wait, in order,
 * until they are there. Resolves once they are. With `attach` (a server, or one still starting,
 * which the handshake does not wait for), the session's shells can be attached to (`hands attach`).
 */
export async function serveStdio(options: SurfaceOptions = {}, attaching: AttachServer | Promise<AttachServer | null> | null = null): Promise<void> {
  const attach = Promise.resolve(attaching)
  const server = newMcpServer()
  let hands: HandsMcpServer | null = null
  // The tool list is static data: answered before the tools load (the session's own handler replaces this one).
  const isListStatic = isStaticList(options)
  if (isListStatic) {
    let listed: ReturnType<typeof staticMcpTools> = null
    server.setRequestHandler(ListToolsRequestSchema, (request) => {
      onePage(request)
      listed ??= staticMcpTools(options)
      return { tools: listed as never }
    })
  }
  const log = (text: string) => {
    if (hands === null) process.stderr.write(`hands: ${text}\n`)
    else hands.notify('warning', text)
  }
  // Whole lines only reach the transport, none over the limit.
  const input = process.stdin.pipe(
    new LineLimit(MAX_STDIO_MESSAGE_BYTES, ({ bytes, id }) => {
      log(
        `dropped a stdio message of ${bytes} bytes (over the ${MAX_STDIO_MESSAGE_BYTES}-byte limit); answered ${id === null ? 'with id null' : `request ${JSON.stringify(id)}`}`,
      )
      const message = `Invalid Request: this message is ${bytes} bytes, over this server's ${MAX_STDIO_MESSAGE_BYTES}-byte limit for one stdio message; it was not read. Send less in one request.`
      void transport.send({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidRequest, message, data: { bytes, limit: MAX_STDIO_MESSAGE_BYTES } } } as never)
    }),
  )
  const transport = new StdioTransport(input, process.stdout, (what) => log(`answered ${what} with an error`))
  let exiting = false
  const shutdown = async (why: string) => {
    if (exiting) return
    exiting = true
    process.stderr.write(`hands: ${why}; stopping shells and exiting\n`)
    await (await attach)?.close()
    const closing = hands === null ? server.close() : hands.close(why)
    await closing.catch((e: unknown) => process.stderr.write(`hands: close failed: ${String(e)}\n`))
    process.exit(0)
  }
  process.stdin.on('end', () => void shutdown('stdin closed'))
  process.stdin.on('close', () => void shutdown('stdin closed'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  transport.onclose = () => void shutdown('transport closed')
  await server.connect(transport)

  const deliver = transport.onmessage as (message: JSONRPCMessage) => void
  const refuse = (id: RequestId, code: number, message: string) => void transport.send({ jsonrpc: '2.0', id, error: { code, message } } as never)
  const waiting: JSONRPCMessage[] = []
  let isInitializeSeen = false
  let isInitialized = false
  let load: () => void = () => {}
  const loaded = new Promise<HandsMcpServer>((resolve, reject) => {
    load = () => {
      load = () => {}
      Promise.all([import('./server.ts'), import('../session.ts')])
        .then(([{ attachSession }, { shareLoginEnvironment }]) => {
          const attached = attachSession(server, shareLoginEnvironment(options), { isInitialized })
          hands = attached
          void attach.then((a) => a?.add('1', attached.session))
          for (const message of waiting.splice(0)) deliver(message)
          resolve(hands)
        })
        .catch(reject)
    }
  })
  transport.onmessage = (message) => {
    if (isRequest(message)) {
      if (message.method === 'initialize') {
        if (isInitializeSeen)
          return refuse(message.id, ErrorCode.InvalidRequest, 'Invalid Request: this session is already initialized; initialize is sent once')
        isInitializeSeen = true
        return deliver(message)
      }
      if (!SERVED_METHODS.has(message.method)) {
        return refuse(message.id, ErrorCode.MethodNotFound, `Method not found: ${message.method}; hands serves ${[...SERVED_METHODS].join(', ')}`)
      }
      if (!isInitializeSeen && message.method !== 'ping') {
        return refuse(message.id, SERVER_ERROR, `Bad Request: ${message.method} before initialize; start the session with an initialize request`)
      }
    } else if (!isInitializeSeen) {
      return // a notification or response before the session began: nothing to act on
    }
    if (hands !== null || ('method' in message && (HANDSHAKE.has(message.method) || (isListStatic && message.method === 'tools/list')))) return deliver(message)
    waiting.push(message)
    load()
  }
  server.oninitialized = () => {
    isInitialized = true
    load()
  }
  const { session } = await loaded.catch((e: unknown) => {
    process.stderr.write(`hands: could not load the tools: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
    return process.exit(1)
  })
  process.stderr.write(`hands: serving MCP over stdio; roots ${session.roots.join(', ') || 'none'}; ${session.tools.length} tools\n`)
}

import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import type { AttachServer } from '../attach/server.ts'
import type { SurfaceOptions } from '../session.ts'
import { createMcpServer, type HandsMcpServer } from './server.ts'

export const MCP_PATH = '/mcp'

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost'])

/** True for a host name or address that only this machine can reach. */
export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host)
}

/** Parse `HOST:PORT` (IPv6 as `[::1]:PORT`); port 0 picks a free port. */
export function parseListen(value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value)
  const port = m ? Number(m[3]) : NaN
  if (m === null || port > 65535) throw new Error(`--http takes HOST:PORT (e.g. 127.0.0.1:8765), got ${JSON.stringify(value)}`)
  return { host: (m[1] ?? m[2]) as string, port }
}

export interface HttpServeOptions {
  host: string
  port: number
  /** Bind a non-loopback address. Without it such a bind is refused. */
  allowRemote?: boolean
}

export interface RunningHttpServer {
  url: string
  /** Close every MCP session (stopping its shells) and the listener. */
  close(): Promise<void>
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  return text === '' ? undefined : JSON.parse(text)
}

function reply(res: ServerResponse, status: number, message: string) {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }))
}

/**
 * Serve MCP over Streamable HTTP at `http://HOST:PORT/mcp`. Each MCP session is one hands
 * session with its own shells, stopped when the client ends the session or the server closes.
 */
export async function serveHttp(listen: HttpServeOptions, options: SurfaceOptions = {}, attach: AttachServer | null = null): Promise<RunningHttpServer> {
  if (!isLoopback(listen.host) && !listen.allowRemote) {
    throw new Error(
      `refusing to serve on ${listen.host}: it is reachable from other machines and hands runs commands. Bind 127.0.0.1, or pass --allow-remote if you mean it.`,
    )
  }
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; hands: HandsMcpServer }>()
  // Host headers accepted on a loopback bind (DNS-rebinding protection); set once the port is known.
  let allowedHosts: string[] | undefined
  let sessionCount = 0

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (allowedHosts !== undefined && !allowedHosts.includes(req.headers.host ?? '')) {
      return reply(res, 403, `Host ${JSON.stringify(req.headers.host ?? '')} is not allowed; use ${allowedHosts.join(' or ')}`)
    }
    const url = new URL(req.url ?? '/', 'http://localhost')
    if (url.pathname !== MCP_PATH) return reply(res, 404, `not found; the MCP endpoint is ${MCP_PATH}`)
    const sessionId = req.headers['mcp-session-id']
    const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined
    if (existing) {
      const body = req.method === 'POST' ? await readJson(req) : undefined
      return existing.transport.handleRequest(req, res, body)
    }
    if (req.method !== 'POST') return reply(res, 400, 'no valid mcp-session-id; start with an initialize request')
    let body: unknown
    try {
      body = await readJson(req)
    } catch {
      return reply(res, 400, 'the request body is not JSON')
    }
    if (!isInitializeRequest(body)) return reply(res, 400, 'no valid mcp-session-id; start with an initialize request')

    const hands = createMcpServer(options)
    const label = String(++sessionCount)
    attach?.add(label, hands.session)
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, hands })
      },
    })
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
      attach?.remove(label)
      void hands.close()
    }
    await hands.server.connect(transport)
    await transport.handleRequest(req, res, body)
  }

  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      process.stderr.write(`hands: http request failed: ${String(e)}\n`)
      if (!res.headersSent) reply(res, 500, 'internal error')
    })
  })
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(listen.port, listen.host, () => resolve())
  })
  const address = http.address() as AddressInfo
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  const url = `http://${host}:${address.port}${MCP_PATH}`
  if (isLoopback(listen.host)) allowedHosts = [`127.0.0.1:${address.port}`, `localhost:${address.port}`, `[::1]:${address.port}`]

  let closing: Promise<void> | null = null
  return {
    url,
    close: () => {
      closing ??= (async () => {
        const all = [...sessions.values()]
        sessions.clear()
        await attach?.close()
        await Promise.all(all.map((s) => s.hands.close()))
        http.closeAllConnections()
        await new Promise<void>((resolve) => http.close(() => resolve()))
      })()
      return closing
    },
  }
}

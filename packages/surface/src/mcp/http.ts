import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js'
import { ErrorCode, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import type { AttachServer } from '../attach/server.ts'
import { shareLoginEnvironment, type SurfaceOptions } from '../session.ts'
import { allowedHosts, hostHeader, isAllowedOrigin, isLoopback } from './guard.ts'
import { BodyTooLarge, readBody } from './read-body.ts'
import { HttpTransport, reply, SERVER_ERROR, SESSION_NOT_FOUND } from './http-transport.ts'
import { createMcpServer, type HandsMcpServer } from './server.ts'

export { isLoopback }

export const MCP_PATH = '/mcp'
/** A session with no request for this long is closed (30 minutes). */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60 * 1000
/** Sessions open at once, at most. */
export const DEFAULT_MAX_SESSIONS = 32
/** At the session cap, a session idle this long (1 minute) with no running shell may be closed to admit a new one. */
export const DEFAULT_EVICT_IDLE_MS = 60 * 1000
/** The largest request body read (4 MiB); a larger one is answered 413. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
/**
 * How long an idle connection stays open (60 s). A model's calls come seconds apart; with Node's
 * default of 5 s, a client (undici closes a second before the server's hint) reconnects for
 * nearly every call.
 */
const KEEP_ALIVE_MS = 60_000
/** How long a client answered 413 may go on sending (read and dropped) before its connection is cut. */
const DRAIN_MS = 5000

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
  /** A session with no request for this many ms is closed, its shells stopped (default 30 minutes). */
  sessionIdleMs?: number
  /**
   * Sessions open at once (default 32). At the cap, one more `initialize` closes the least
   * recently used session that has had no request for `evictIdleMs` and runs no shell; when none
   * qualifies, it is answered 503.
   */
  maxSessions?: number
  /** How long a session must have been idle, with no running shell, to be closed for a new one at the cap (default 1 minute). */
  evictIdleMs?: number
  /** The largest request body read, in bytes; a larger one is answered 413 (default 4 MiB). */
  maxBodyBytes?: number
  /** More Host header values to accept (`name` for `name:PORT`, or `name:port`), besides the bind address and, on loopback, the loopback names. */
  allowHosts?: string[]
}

export interface RunningHttpServer {
  url: string
  /** Ids of the sessions open now. */
  sessions(): string[]
  /** Close every MCP session (stopping its shells) and the listener. */
  close(): Promise<void>
}

interface LiveSession {
  id: string
  transport: HttpTransport
  hands: HandsMcpServer
  /** Requests of this session still open (a held SSE stream counts). */
  active: number
  /** `performance.now()` when its last request closed (or it opened). */
  lastActive: number
  idle: NodeJS.Timeout | null
  /** The session's label for `hands attach`. */
  label: string
}

/** Ids of sessions that ended, remembered (boundedly) only to say so in the 404. */
const ENDED_KEPT = 1024

class BadBody extends Error {}

async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const text = (await readBody(req, limit)).toString('utf8')
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new BadBody(`the request body is not JSON (${(e as Error).message})`)
  }
}

/** Why a POST's headers are refused before its body is read, or null when they are fine. */
function postHeaders(req: IncomingMessage): { status: number; message: string } | null {
  if (!isJsonContentType(req.headers['content-type'])) {
    return { status: 415, message: `Unsupported Media Type: Content-Type must be application/json, got ${JSON.stringify(req.headers['content-type'] ?? '')}` }
  }
  const accept = req.headers.accept ?? ''
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    return { status: 406, message: 'Not Acceptable: Accept must list both application/json and text/event-stream' }
  }
  return null
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer (got ${value})`)
  return value
}

/**
 * Serve MCP over Streamable HTTP at `http://HOST:PORT/mcp`. Each MCP session is one hands
 * session with its own shells, stopped when the client ends the session (DELETE), when it has
 * had no request for `sessionIdleMs`, or when the server closes. At most `maxSessions` are
 * open at once. The login environment is captured once, at start, for every session.
 */
export async function serveHttp(listen: HttpServeOptions, options: SurfaceOptions = {}, attach: AttachServer | null = null): Promise<RunningHttpServer> {
  if (!isLoopback(listen.host) && !listen.allowRemote) {
    throw new Error(
      `refusing to serve on ${listen.host}: it is reachable from other machines and hands runs commands. Bind 127.0.0.1, or pass --allow-remote if you mean it.`,
    )
  }
  const idleMs = positive('sessionIdleMs', listen.sessionIdleMs, DEFAULT_SESSION_IDLE_MS)
  const maxSessions = positive('maxSessions', listen.maxSessions, DEFAULT_MAX_SESSIONS)
  const evictIdleMs = positive('evictIdleMs', listen.evictIdleMs, DEFAULT_EVICT_IDLE_MS)
  const maxBody = positive('maxBodyBytes', listen.maxBodyBytes, DEFAULT_MAX_BODY_BYTES)
  // Closing the server stops a login-environment capture still running.
  const capture = new AbortController()
  const sessionOptions = shareLoginEnvironment(options, capture.signal)

  const sessions = new Map<string, LiveSession>()
  const ended = new Map<string, string>()
  /** Sessions being opened (an initialize in flight), counted against the cap. */
  let opening = 0
  /** Labels of sessions for `hands attach` (1, 2, … in the order they opened). */
  let labels = 0
  let closing: Promise<void> | null = null
  // Host headers accepted (DNS-rebinding protection), null for any; set once the port is known.
  let hosts: string[] | null = []

  const remember = (id: string, why: string) => {
    ended.set(id, why)
    if (ended.size > ENDED_KEPT) ended.delete(ended.keys().next().value as string)
  }

  const end = (s: LiveSession, why: string): Promise<void> => {
    if (sessions.get(s.id) === s) {
      sessions.delete(s.id)
      remember(s.id, why)
    }
    if (s.idle !== null) clearTimeout(s.idle)
    s.idle = null
    attach?.remove(s.label)
    s.hands.notify('info', why)
    return s.hands.close(why).then(() => s.transport.close().catch(() => {}))
  }

  /** Count a request as open on `s` until its response closes; the idle clock starts when none is open. */
  const hold = (s: LiveSession, res: ServerResponse) => {
    s.active++
    if (s.idle !== null) clearTimeout(s.idle)
    s.idle = null
    res.once('close', () => {
      s.active--
      s.lastActive = performance.now()
      if (s.active > 0 || sessions.get(s.id) !== s) return
      s.idle = setTimeout(() => {
        void end(s, `session ${s.id} had no request for ${idleMs} ms and expired`)
      }, idleMs)
      s.idle.unref()
    })
  }

  /**
   * The session to close for a new one at the cap: the least recently used of those with no
   * request open for at least `evictIdleMs` and no running shell (clients that never DELETE, such
   * as the Inspector CLI, leave such sessions behind); null when every session is busy or recent.
   */
  const evictable = (): LiveSession | null => {
    const now = performance.now()
    let oldest: LiveSession | null = null
    for (const s of sessions.values()) {
      if (s.active > 0 || now - s.lastActive < evictIdleMs) continue
      if (s.hands.session.resources().some((r) => r.status === 'running')) continue
      if (oldest === null || s.lastActive < oldest.lastActive) oldest = s
    }
    return oldest
  }

  const open = async (req: IncomingMessage, res: ServerResponse, body: unknown) => {
    const id = (body as { id?: unknown }).id
    if (sessions.size + opening >= maxSessions) {
      const lru = evictable()
      if (lru === null) {
        return reply(
          res,
          503,
          SERVER_ERROR,
          `this server already has ${maxSessions} sessions open, its limit (--max-sessions), and every one of them is busy (a request open or a shell running) or was used in the last ${Math.round(evictIdleMs / 1000)} s; end one with an HTTP DELETE carrying its Mcp-Session-Id, or wait for one to go idle`,
          id,
        )
      }
      const idleFor = Math.round((performance.now() - lru.lastActive) / 1000)
      void end(
        lru,
        `session ${lru.id} was closed to admit a new one: the server is at its limit of ${maxSessions} sessions (--max-sessions) and this one was the least recently used, idle for ${idleFor} s with no running shell`,
      )
    }
    opening++
    let registered = false
    try {
      const hands = createMcpServer(sessionOptions)
      const transport = new HttpTransport({
        sessionId: () => randomUUID(),
        onSessionInitialized: (sid) => {
          const s: LiveSession = { id: sid, transport, hands, active: 0, lastActive: performance.now(), idle: null, label: String(++labels) }
          sessions.set(sid, s)
          attach?.add(s.label, hands.session)
          registered = true
          hold(s, res)
        },
      })
      transport.onclose = () => {
        const sid = transport.sessionId
        const s = sid === undefined ? undefined : sessions.get(sid)
        if (s !== undefined) void end(s, `session ${s.id} was ended by the client`)
        else void hands.close()
      }
      await hands.server.connect(transport)
      transport.handle(req, res, body)
      if (!registered) await hands.close()
    } finally {
      opening--
    }
  }

  /**
   * Everything about a request is checked before anything is made for it: Host, path, Origin,
   * method, then (for a POST) its headers, its size and its JSON. Only a valid `initialize`
   * under the session cap creates a session, and a session starts no process until a tool
   * needs one.
   */
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const refusal = await peerRefusalOf(req.socket)
    // The client may have gone while it was checked: nothing is left to answer (a GET stream
    // registered now would never see its close).
    if (req.socket.destroyed) return
    if (refusal !== null) return reply(res, 403, SERVER_ERROR, `hands refuses this request: ${refusal}. Use it from outside the commands hands runs.`)
    const host = (req.headers.host ?? '').toLowerCase()
    if (hosts !== null && !hosts.includes(host)) {
      return reply(res, 403, SERVER_ERROR, `Host ${JSON.stringify(req.headers.host ?? '')} is not allowed; use ${hosts.join(' or ')} (more with --allow-host)`)
    }
    const url = new URL(req.url ?? '/', 'http://localhost')
    if (url.pathname !== MCP_PATH) return reply(res, 404, SERVER_ERROR, `not found; the MCP endpoint is ${MCP_PATH}`)
    if (!isAllowedOrigin(req.headers.origin, hosts)) {
      return reply(
        res,
        403,
        SERVER_ERROR,
        `Origin ${JSON.stringify(req.headers.origin)} is not allowed: only requests without an Origin, or from a loopback or allowed host, reach this server`,
      )
    }
    if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'DELETE') {
      return reply(res, 405, SERVER_ERROR, `Method ${req.method ?? ''} not allowed; use POST, GET or DELETE`, null, { allow: 'GET, POST, DELETE' })
    }
    if (closing !== null) return reply(res, 503, SERVER_ERROR, 'this server is shutting down')
    const headerError = req.method === 'POST' ? postHeaders(req) : null
    if (headerError !== null) return reply(res, headerError.status, SERVER_ERROR, headerError.message)
    const sessionId = req.headers['mcp-session-id']
    if (sessionId !== undefined) {
      const id = Array.isArray(sessionId) ? sessionId.join(',') : sessionId
      const s = sessions.get(id)
      if (s === undefined) {
        const why = ended.get(id)
        return reply(
          res,
          404,
          SESSION_NOT_FOUND,
          `Session not found: ${why ?? `no session ${JSON.stringify(id)} is open here`}; start a new one with initialize`,
        )
      }
      hold(s, res)
      const body = req.method === 'POST' ? await readJson(req, maxBody) : undefined
      return s.transport.handle(req, res, body)
    }
    if (req.method !== 'POST') return reply(res, 400, SERVER_ERROR, 'no Mcp-Session-Id header; start a session with an initialize request')
    const body = await readJson(req, maxBody)
    if (!isInitializeRequest(body))
      return reply(res, 400, SERVER_ERROR, 'no Mcp-Session-Id header; start a session with an initialize request', (body as { id?: unknown } | null)?.id)
    return open(req, res, body)
  }

  // Who is on the other end of each connection, asked once per connection as it opens: a command
  // of any hands job (this server's or another's) must not drive this server's tools.
  const peers = new WeakMap<Socket, Promise<string | null>>()
  let isPeerCheckLost = false
  const peerRefusalOf = (socket: Socket): Promise<string | null> => {
    let found = peers.get(socket)
    if (found === undefined) {
      found = import('@hands/shell-runtime')
        .then((m) => m.tcpPeerRefusal(socket))
        .catch((e: unknown) => {
          // Without the helper nothing can tell (and commands run unconfined anyway): say so once.
          if (!isPeerCheckLost) process.stderr.write(`hands: cannot check who connects over HTTP: ${(e as Error).message}\n`)
          isPeerCheckLost = true
          return null
        })
      peers.set(socket, found)
    }
    return found
  }

  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (res.headersSent) return
      if (e instanceof BadBody) return reply(res, 400, ErrorCode.ParseError, `Parse error: ${e.message}`)
      if (e instanceof BodyTooLarge) {
        // Answer at once while the rest of the body is read and dropped: closing a socket the
        // client is still writing to resets it, and the client may lose the answer. One that
        // goes on sending past DRAIN_MS is cut.
        reply(res, 413, SERVER_ERROR, `Payload Too Large: ${e.message}, this server's limit (--max-body-bytes)`)
        const cut = setTimeout(() => req.socket.destroy(), DRAIN_MS)
        cut.unref()
        req.once('end', () => clearTimeout(cut))
        req.once('close', () => clearTimeout(cut))
        return
      }
      process.stderr.write(`hands: http request failed: ${String(e)}\n`)
      reply(res, 500, SERVER_ERROR, 'internal error')
    })
  })
  http.on('connection', (socket: Socket) => void peerRefusalOf(socket))
  http.keepAliveTimeout = KEEP_ALIVE_MS
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(listen.port, listen.host, () => resolve())
  })
  const address = http.address() as AddressInfo
  const url = `http://${hostHeader(address.address, address.port)}${MCP_PATH}`
  hosts = allowedHosts(listen.host, address.port, listen.allowHosts ?? [])

  return {
    url,
    sessions: () => [...sessions.keys()],
    close: () => {
      closing ??= (async () => {
        capture.abort()
        await attach?.close()
        const all = [...sessions.values()]
        await Promise.all(all.map((s) => end(s, 'the server is shutting down')))
        http.closeAllConnections()
        await new Promise<void>((resolve) => http.close(() => resolve()))
        await sessionOptions.loginEnv?.().catch(() => undefined)
      })()
      return closing
    },
  }
}

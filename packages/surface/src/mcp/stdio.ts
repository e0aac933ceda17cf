import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js'
import { ErrorCode, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { AttachServer } from '../attach/server.ts'
import type { SurfaceOptions } from '../session.ts'
import { LineLimit } from './line-limit.ts'
import { newMcpServer } from './sdk-server.ts'
import type { HandsMcpServer } from './server.ts'

/** The largest stdio message read: the SDK's own limit (10 MiB). */
export const MAX_STDIO_MESSAGE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE

/** Messages the SDK answers by itself: the handshake needs no tool. */
const HANDSHAKE = new Set(['initialize', 'notifications/initialized', 'ping'])

/**
 * Serve one session over stdio. stdout carries protocol only; logs go to stderr. A message over
 * 10 MiB is dropped as it arrives and answered with an Invalid Request error; the session goes
 * on. On stdin close, SIGINT or SIGTERM every shell is stopped and the process exits 0.
 *
 * The server answers `initialize` on the MCP SDK alone; the tools (contracts, validators,
 * runtimes) load once the client has initialized, or as soon as it asks for anything else, and
 * the login environment is then captured in the background. Messages that need the tools wait,
 * in order, until they are there. Resolves once they are. With `attach`, the session's shells
 * can be attached to (`hands attach`).
 */
export async function serveStdio(options: SurfaceOptions = {}, attach: AttachServer | null = null): Promise<void> {
  const server = newMcpServer()
  let hands: HandsMcpServer | null = null
  // Whole lines only reach the SDK's reader, none over the limit, so its own size check (which
  // would close the transport and stop every shell) never fires.
  const input = process.stdin.pipe(
    new LineLimit(MAX_STDIO_MESSAGE_BYTES, ({ bytes, id }) => {
      const text = `dropped a stdio message of ${bytes} bytes (over the ${MAX_STDIO_MESSAGE_BYTES}-byte limit); answered ${id === null ? 'with id null' : `request ${JSON.stringify(id)}`}`
      if (hands === null) process.stderr.write(`hands: ${text}\n`)
      else hands.notify('warning', text)
      const message = `Invalid Request: this message is ${bytes} bytes, over this server's ${MAX_STDIO_MESSAGE_BYTES}-byte limit for one stdio message; it was not read. Send less in one request.`
      process.stdout.write(
        `${JSON.stringify({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidRequest, message, data: { bytes, limit: MAX_STDIO_MESSAGE_BYTES } } })}\n`,
      )
    }),
  )
  const transport = new StdioServerTransport(input, process.stdout, { maxBufferSize: MAX_STDIO_MESSAGE_BYTES + 1 })
  let exiting = false
  const shutdown = async (why: string) => {
    if (exiting) return
    exiting = true
    process.stderr.write(`hands: ${why}; stopping shells and exiting\n`)
    await attach?.close()
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
  const waiting: JSONRPCMessage[] = []
  let load: () => void = () => {}
  const loaded = new Promise<HandsMcpServer>((resolve, reject) => {
    load = () => {
      load = () => {}
      Promise.all([import('./server.ts'), import('../session.ts')])
        .then(([{ attachSession }, { shareLoginEnvironment }]) => {
          hands = attachSession(server, shareLoginEnvironment(options))
          attach?.add('1', hands.session)
          for (const message of waiting.splice(0)) deliver(message)
          resolve(hands)
        })
        .catch(reject)
    }
  })
  transport.onmessage = (message) => {
    if (hands !== null || ('method' in message && HANDSHAKE.has(message.method))) return deliver(message)
    waiting.push(message)
    load()
  }
  server.oninitialized = () => load()
  const { session } = await loaded.catch((e: unknown) => {
    process.stderr.write(`hands: could not load the tools: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
    return process.exit(1)
  })
  process.stderr.write(`hands: serving MCP over stdio; roots ${session.roots.join(', ')}; ${session.tools.length} tools\n`)
}

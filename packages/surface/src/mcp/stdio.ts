import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { AttachServer } from '../attach/server.ts'
import { shareLoginEnvironment, type SurfaceOptions } from '../session.ts'
import { LineLimit } from './line-limit.ts'
import { createMcpServer } from './server.ts'

/** The largest stdio message read: the SDK's own limit (10 MiB). */
export const MAX_STDIO_MESSAGE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE
const INVALID_REQUEST = -32600

/**
 * Serve one session over stdio. stdout carries protocol only; logs go to stderr. The login
 * environment is captured at start, in the background. A message over 10 MiB is dropped as it
 * arrives and answered with an Invalid Request error; the session goes on. On stdin close,
 * SIGINT or SIGTERM every shell is stopped and the process exits 0. With `attach`, the session's
 * shells can be attached to (`hands attach`).
 */
export async function serveStdio(options: SurfaceOptions = {}, attach: AttachServer | null = null): Promise<void> {
  const hands = createMcpServer(shareLoginEnvironment(options))
  attach?.add('1', hands.session)
  // Whole lines only reach the SDK's reader, none over the limit, so its own size check (which
  // would close the transport and stop every shell) never fires.
  const input = process.stdin.pipe(
    new LineLimit(MAX_STDIO_MESSAGE_BYTES, ({ bytes, id }) => {
      hands.notify('warning', `dropped a stdio message of ${bytes} bytes (over the ${MAX_STDIO_MESSAGE_BYTES}-byte limit); answered ${id === null ? 'with id null' : `request ${JSON.stringify(id)}`}`)
      const message = `Invalid Request: this message is ${bytes} bytes, over this server's ${MAX_STDIO_MESSAGE_BYTES}-byte limit for one stdio message; it was not read. Send less in one request.`
      process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code: INVALID_REQUEST, message, data: { bytes, limit: MAX_STDIO_MESSAGE_BYTES } } })}\n`)
    }),
  )
  const transport = new StdioServerTransport(input, process.stdout, { maxBufferSize: MAX_STDIO_MESSAGE_BYTES + 1 })
  let exiting = false
  const shutdown = async (why: string) => {
    if (exiting) return
    exiting = true
    process.stderr.write(`hands: ${why}; stopping shells and exiting\n`)
    await attach?.close()
    await hands.close(why).catch((e: unknown) => process.stderr.write(`hands: close failed: ${String(e)}\n`))
    process.exit(0)
  }
  process.stdin.on('end', () => void shutdown('stdin closed'))
  process.stdin.on('close', () => void shutdown('stdin closed'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  transport.onclose = () => void shutdown('transport closed')
  await hands.server.connect(transport)
  process.stderr.write(`hands: serving MCP over stdio; roots ${hands.session.roots.join(', ')}; ${hands.session.tools.length} tools\n`)
}

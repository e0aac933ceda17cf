import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { AttachServer } from '../attach/server.ts'
import type { SurfaceOptions } from '../session.ts'
import { createMcpServer } from './server.ts'

/**
 * Serve one session over stdio. stdout carries protocol only; logs go to stderr. On stdin
 * close, SIGINT or SIGTERM every shell is stopped and the process exits 0. With `attach`, the
 * session's shells can be attached to (`hands attach`).
 */
export async function serveStdio(options: SurfaceOptions = {}, attach: AttachServer | null = null): Promise<void> {
  const hands = createMcpServer(options)
  attach?.add('1', hands.session)
  const transport = new StdioServerTransport()
  let exiting = false
  const shutdown = async (why: string) => {
    if (exiting) return
    exiting = true
    process.stderr.write(`hands: ${why}; stopping shells and exiting\n`)
    await attach?.close()
    await hands.close().catch((e: unknown) => process.stderr.write(`hands: close failed: ${String(e)}\n`))
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

import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { SurfaceOptions } from '../session.ts'
import { createMcpServer } from './server.ts'

/**
 * Serve one session over stdio. stdout carries protocol only; logs go to stderr. On stdin
 * close, SIGINT or SIGTERM every shell is stopped and the process exits 0.
 */
export async function serveStdio(options: SurfaceOptions = {}): Promise<void> {
  const hands = createMcpServer(options)
  const transport = new StdioServerTransport()
  let exiting = false
  const shutdown = async (why: string) => {
    if (exiting) return
    exiting = true
    process.stderr.write(`hands: ${why}; stopping shells and exiting\n`)
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

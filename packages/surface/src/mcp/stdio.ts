import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { shareLoginEnvironment, type SurfaceOptions } from '../session.ts'
import { createMcpServer } from './server.ts'

/**
 * Serve one session over stdio. stdout carries protocol only; logs go to stderr. The login
 * environment is captured at start, in the background. On stdin close, SIGINT or SIGTERM
 * every shell is stopped and the process exits 0.
 */
export async function serveStdio(options: SurfaceOptions = {}): Promise<void> {
  const hands = createMcpServer(shareLoginEnvironment(options))
  const transport = new StdioServerTransport()
  let exiting = false
  const shutdown = async (why: string) => {
    if (exiting) return
    exiting = true
    process.stderr.write(`hands: ${why}; stopping shells and exiting\n`)
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

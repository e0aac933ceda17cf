import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { SurfaceOptions } from '../session.ts'
import { newMcpServer } from './sdk-server.ts'
import type { HandsMcpServer } from './server.ts'

/** Messages the SDK answers by itself: the handshake needs no tool. */
const HANDSHAKE = new Set(['initialize', 'notifications/initialized', 'ping'])

/**
 * Serve one session over stdio. stdout carries protocol only; logs go to stderr. On stdin
 * close, SIGINT or SIGTERM every shell is stopped and the process exits 0.
 *
 * The server answers `initialize` on the MCP SDK alone; the tools (contracts, validators,
 * runtimes) load once the client has initialized, or as soon as it asks for anything else.
 * Messages that need them wait, in order, until they are there. Resolves once they are.
 */
export async function serveStdio(options: SurfaceOptions = {}): Promise<void> {
  const server = newMcpServer()
  const transport = new StdioServerTransport()
  let hands: HandsMcpServer | null = null
  let exiting = false
  const shutdown = async (why: string) => {
    if (exiting) return
    exiting = true
    process.stderr.write(`hands: ${why}; stopping shells and exiting\n`)
    await (hands ?? server).close().catch((e: unknown) => process.stderr.write(`hands: close failed: ${String(e)}\n`))
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
      import('./server.ts')
        .then(({ attachSession }) => {
          hands = attachSession(server, options)
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

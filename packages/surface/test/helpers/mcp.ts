import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ListRootsRequestSchema, LoggingMessageNotificationSchema, type CallToolResult, type Root } from '@modelcontextprotocol/sdk/types.js'
import { handsArgv } from './cli.ts'

export const REPO = join(import.meta.dirname, '..', '..', '..', '..')

/** A client that offers roots: `setRoots` changes them and tells the server (roots/list_changed). */
export interface RootsOffer {
  roots: Root[]
}

/**
 * A real MCP client talking to `hands serve` over stdio, the server started as a desktop client
 * starts the installed bin: node itself (no pnpm), in `cwd`, without INIT_CWD. With `offer`, the client declares
 * the roots capability and answers roots/list with `offer.roots`. Every log notice it gets is kept.
 */
export async function connectAs(
  args: string[],
  options: { cwd?: string; offer?: RootsOffer; env?: Record<string, string>; capabilities?: Record<string, unknown> } = {},
) {
  const { INIT_CWD: _init, npm_lifecycle_event: _event, ...env } = process.env as Record<string, string>
  const [command, ...argv] = handsArgv(['serve', ...args])
  const transport = new StdioClientTransport({
    command,
    args: argv,
    cwd: options.cwd ?? REPO,
    env: { ...env, ...options.env },
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString()
  })
  const capabilities = { ...options.capabilities, ...(options.offer ? { roots: { listChanged: true } } : {}) }
  const client = new Client({ name: 'hands-test', version: '0.0.0' }, { capabilities })
  const notices: string[] = []
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    notices.push(String(n.params.data))
  })
  const offer = options.offer
  if (offer) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: offer.roots }))
  await client.connect(transport)
  return {
    client,
    transport,
    notices,
    stderr: () => stderr,
    /** Offer these roots from now on and tell the server. */
    setRoots: async (roots: Root[]) => {
      if (offer) offer.roots = roots
      await client.sendRootsListChanged()
    },
  }
}

/** A real MCP client talking to `hands serve` over stdio, started from the repo root. */
export async function connectStdio(args: string[], env: Record<string, string> = {}, capabilities: Record<string, unknown> = {}) {
  const [command, ...argv] = handsArgv(['serve', ...args])
  const transport = new StdioClientTransport({
    command,
    args: argv,
    cwd: REPO,
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString()
  })
  const client = new Client({ name: 'hands-test', version: '0.0.0' }, { capabilities })
  await client.connect(transport)
  return { client, transport, stderr: () => stderr }
}

/** The structured result of a successful call (validated by the client against outputSchema). */
export function structured<T = Record<string, unknown>>(r: CallToolResult | Record<string, unknown>): T {
  const result = r as CallToolResult
  if (result.isError) throw new Error(`tool failed: ${JSON.stringify(result.content)}`)
  return result.structuredContent as T
}

/** The error envelope of a failed call. */
export function envelope(r: CallToolResult | Record<string, unknown>): Record<string, unknown> {
  const result = r as CallToolResult
  if (!result.isError) throw new Error(`tool succeeded: ${JSON.stringify(result.structuredContent)}`)
  return (result._meta?.['hands/error'] ?? {}) as Record<string, unknown>
}

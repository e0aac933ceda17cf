import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'

export const REPO = join(import.meta.dirname, '..', '..', '..', '..')

/** A real MCP client talking to `pnpm hands serve` over stdio. */
export async function connectStdio(args: string[], env: Record<string, string> = {}, capabilities: Record<string, unknown> = {}) {
  const transport = new StdioClientTransport({
    command: 'pnpm',
    args: ['--silent', 'hands', 'serve', ...args],
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

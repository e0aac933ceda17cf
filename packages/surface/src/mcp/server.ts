import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js'
import { toApiTools } from '../adapters/api-tools.ts'
import type { ConfirmHook } from '../hooks.ts'
import { renderOutcome } from '../render/text.ts'
import { createSurface, type Session, type SurfaceOptions } from '../session.ts'
import { newMcpServer } from './sdk-server.ts'

export const SHELLS_URI = 'hands://shells'
const shellUri = (id: string) => `${SHELLS_URI}/${encodeURIComponent(id)}`

/** An MCP server bound to one hands session. */
export interface HandsMcpServer {
  server: Server
  session: Session
  /** Close the session (stopping every shell) and the server. Idempotent. */
  close(): Promise<void>
}

/**
 * An MCP server over one session. Tools come from the contracts; results are the contract
 * object as `structuredContent` plus rendered text; failures set `isError` and carry the
 * envelope under `_meta["hands/error"]`. Background shells are resources.
 */
export function createMcpServer(options: SurfaceOptions = {}): HandsMcpServer {
  return attachSession(newMcpServer(), options)
}

/** Open a session on `server` (from `newMcpServer`, connected or not) and register its handlers. */
export function attachSession(server: Server, options: SurfaceOptions = {}): HandsMcpServer {
  // Destructive calls ask the client's user when the client can be asked; otherwise the
  // host's own hook (if any) decides, and the destructiveHint annotation lets the client ask.
  const viaElicitation: ConfirmHook = async (request) => {
    if (server.getClientCapabilities()?.elicitation === undefined) return options.confirm ? options.confirm(request) : true
    const what = request.action === 'delete' ? 'Delete' : 'Overwrite'
    try {
      const answer = await server.elicitInput({
        message: `${request.tool}: ${what} ${request.paths.join(', ')}?`,
        requestedSchema: {
          type: 'object',
          properties: { confirm: { type: 'boolean', title: `${what} ${request.paths.length} path(s)` } },
          required: ['confirm'],
        },
      })
      return answer.action === 'accept' && answer.content?.['confirm'] === true
    } catch (e) {
      process.stderr.write(`hands: confirmation request failed, declining: ${String(e)}\n`)
      return false
    }
  }

  const session = createSurface({ ...options, confirm: viaElicitation })
  const workspace = session.roots[0]
  const renderOptions = workspace === undefined ? {} : { workspace }

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toApiTools('mcp', session.tools) as never }))

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const outcome = await session.call(request.params.name, request.params.arguments ?? {})
    if (outcome.ok) {
      return {
        content: [{ type: 'text', text: renderOutcome(outcome, renderOptions) }],
        structuredContent: outcome.result as Record<string, unknown>,
      }
    }
    return {
      isError: true,
      content: [{ type: 'text', text: renderOutcome(outcome) }],
      _meta: { 'hands/error': outcome.error },
    }
  })

  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [
      {
        uri: SHELLS_URI,
        name: 'shells',
        title: 'Background shells',
        description: 'Live and exited background shells of this session, as JSON.',
        mimeType: 'application/json',
      },
      ...session.resources().map((r) => ({
        uri: shellUri(r.id),
        name: r.id,
        title: `Shell ${r.id} (${r.status})`,
        description: r.commands.join('\n'),
        mimeType: 'text/plain',
      })),
    ],
  }))

  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const { uri } = request.params
    if (uri === SHELLS_URI) {
      return { contents: [{ uri, mimeType: 'application/json', text: `${JSON.stringify(session.resources(), null, 2)}\n` }] }
    }
    if (uri.startsWith(`${SHELLS_URI}/`)) {
      const id = decodeURIComponent(uri.slice(SHELLS_URI.length + 1))
      const lines = session.retainedLines(id)
      if (lines !== null) return { contents: [{ uri, mimeType: 'text/plain', text: lines.join('\n') }] }
    }
    throw new Error(`no resource ${uri}; live shells are listed at ${SHELLS_URI}`)
  })

  const unsubscribe = session.onResourcesChanged(() => {
    server.sendResourceListChanged().catch(() => {
      // Not connected yet, or the client left: nothing to notify.
    })
  })

  let closing: Promise<void> | null = null
  return {
    server,
    session,
    close: () => {
      closing ??= (async () => {
        unsubscribe()
        await session.close()
        await server.close().catch(() => {})
      })()
      return closing
    },
  }
}

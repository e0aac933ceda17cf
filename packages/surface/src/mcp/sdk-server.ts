import { createRequire } from 'node:module'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js'
import { ProtocolError } from './protocol-error.ts'

export const SERVER_NAME = 'hands'
/** This package's version, read from its package.json (two levels up from both src/mcp and dist/mcp). */
export const SERVER_VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version

type Handler = (request: unknown, extra: unknown) => Promise<unknown>
interface Issue {
  path: PropertyKey[]
  message: string
}
interface RequestSchema {
  safeParse(value: unknown): { success: boolean; error?: { issues: Issue[] } }
  shape: { method: { value: string } }
}

/** The requests a hands session answers (the SDK answers any other with Method not found). */
export const SERVED_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'logging/setLevel',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
])

/** The most problems one error message names. */
const ISSUES_SHOWN = 3

/** One readable line for a request whose params do not match the method's schema. */
export function invalidParams(method: string, issues: readonly Issue[]): ProtocolError {
  const named = issues
    .slice(0, ISSUES_SHOWN)
    .map((i) => `${i.path.length === 0 ? 'the request' : i.path.map(String).join('.')}: ${i.message.replace(/\s+/g, ' ')}`)
  const more = issues.length > ISSUES_SHOWN ? `; and ${issues.length - ISSUES_SHOWN} more` : ''
  return new ProtocolError(ErrorCode.InvalidParams, `Invalid params for ${method}: ${named.join('; ')}${more}`)
}

/**
 * The SDK server, answering a request whose params do not match its method's schema with
 * Invalid Params (-32602) and one line naming each bad field, where the SDK answers -32603 with
 * its validator's multi-line dump. The request is checked again only when its handler failed.
 */
class HandsServer extends Server {
  override setRequestHandler(...args: Parameters<Server['setRequestHandler']>): void {
    super.setRequestHandler(...args)
    const schema = args[0] as unknown as RequestSchema
    const method = schema.shape.method.value
    // The SDK keeps its handlers in this (TypeScript-private) map; the one it installed parses the request first.
    const handlers = (this as unknown as { _requestHandlers: Map<string, Handler> })._requestHandlers
    const installed = handlers.get(method) as Handler
    // It parses synchronously: a bad request throws before any promise exists.
    handlers.set(method, async (request, extra) => {
      try {
        return await installed(request, extra)
      } catch (e) {
        const checked = schema.safeParse(request)
        throw checked.success ? e : invalidParams(method, checked.error?.issues ?? [])
      }
    })
  }
}

/**
 * Call `then` each time `server` has accepted an `initialize` (the client's capabilities are
 * known then), before the answer goes out.
 */
export function afterInitialize(server: Server, then: () => void): void {
  // The SDK keeps its handlers in this (TypeScript-private) map, as HandsServer relies on.
  const handlers = (server as unknown as { _requestHandlers: Map<string, Handler> })._requestHandlers
  const installed = handlers.get('initialize') as Handler
  handlers.set('initialize', async (request, extra) => {
    const answer = await installed(request, extra)
    then()
    return answer
  })
}

/**
 * The SDK server hands serves on, with no handler yet: it needs only the MCP SDK, so it can
 * answer `initialize` before the tools (contracts, runtimes) have loaded.
 */
export function newMcpServer(): Server {
  return new HandsServer(
    { name: SERVER_NAME, version: SERVER_VERSION },
    { capabilities: { tools: {}, resources: { listChanged: true }, prompts: {}, logging: {} } },
  )
}

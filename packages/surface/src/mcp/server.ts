import { AsyncLocalStorage } from 'node:async_hooks'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  RootsListChangedNotificationSchema,
  type CallToolResult,
  type LoggingLevel,
  type RequestId,
  type Root,
} from '@modelcontextprotocol/sdk/types.js'
import { SHELL_TOGGLE, isToolName } from '@hands/contracts'
import { toApiTools } from '../adapters/api-tools.ts'
import type { ConfirmHook } from '../hooks.ts'
import { renderOutcome } from '../render/text.ts'
import { createSurface, type Session, type SurfaceOptions } from '../session.ts'
import { askToConfirm } from './confirm.ts'
import { PROMPTS, getPrompt } from './prompts.ts'
import { onePage, protocolError } from './protocol-error.ts'
import { checkClientRoots } from './roots.ts'
import { SERVER_NAME, afterInitialize, newMcpServer } from './sdk-server.ts'

export const SHELLS_URI = 'hands://shells'
/** The URI template of one background shell's retained lines. */
export const SHELL_URI_TEMPLATE = `${SHELLS_URI}/{id}`
const shellUri = (id: string) => `${SHELLS_URI}/${encodeURIComponent(id)}`

/** MCP's resource-not-found error code. */
export const RESOURCE_NOT_FOUND = -32002

/** How long a session waits for the client to answer `roots/list` before it goes on with the roots it has. */
const ROOTS_TIMEOUT_MS = 10_000

/** What a session with no root tells its client. */
export const NO_ROOT_NOTICE =
  "this session has no root, so every tool call is refused: hands was started in / or the home directory without --root, and the client offers no roots. Give `--root DIR` in the client's configuration for hands, or use a client that offers roots."

/** Error codes whose failures are the host's or the user's refusals, worth a log notice. */
const REFUSALS = new Set(['refused', 'not_confirmed', 'outside_roots', 'access_denied', 'protected_path'])

/** An MCP server bound to one hands session. */
export interface HandsMcpServer {
  server: Server
  session: Session
  /** A notice for the server's log (stderr) and, when connected, the client (`notifications/message`). */
  notify(level: LoggingLevel, text: string): void
  /** Close the session (stopping every shell) and the server, saying why in the log. Idempotent. */
  close(why?: string): Promise<void>
}

/** How the server names itself in its log lines. */
export interface McpServerOptions {
  /** Prefix of this server's stderr lines (default `hands`). */
  logPrefix?: string
  /** The client's `initialized` notification has already arrived (the session is attached late, as over stdio). */
  isInitialized?: boolean
}

/**
 * An MCP server over one session. Tools come from the contracts; results are the contract
 * object as `structuredContent` plus rendered text; failures set `isError` and carry the
 * envelope under `_meta["hands/error"]`. A tool that is not served is a protocol error
 * (-32602). Background shells are resources (with a template), the routing prose is a prompt,
 * and the server's notices go to stderr and to the client's log.
 */
export function createMcpServer(options: SurfaceOptions = {}, serverOptions: McpServerOptions = {}): HandsMcpServer {
  return attachSession(newMcpServer(), options, serverOptions)
}

/** Open a session on `server` (from `newMcpServer`, connected or not) and register its handlers. */
export function attachSession(server: Server, options: SurfaceOptions = {}, serverOptions: McpServerOptions = {}): HandsMcpServer {
  const prefix = serverOptions.logPrefix ?? 'hands'

  /** A notice for the client's log only. */
  const tell = (level: LoggingLevel, text: string) => {
    if (server.transport === undefined) return
    server.sendLoggingMessage({ level, logger: SERVER_NAME, data: text }, server.transport.sessionId).catch(() => {
      // The client left: stderr has it.
    })
  }
  const notify = (level: LoggingLevel, text: string) => {
    process.stderr.write(`${prefix}: ${text}\n`)
    tell(level, text)
  }

  // Destructive calls ask the client's user when the client can be asked; otherwise the
  // host's own hook (if any) decides, and the destructiveHint annotation lets the client ask.
  // The question goes out related to the tool call that asks it (the call's id, kept for the
  // call's duration).
  const calling = new AsyncLocalStorage<RequestId>()
  const viaElicitation: ConfirmHook = async (request) => {
    if (server.getClientCapabilities()?.elicitation === undefined) return options.confirm ? options.confirm(request) : true
    const answer = await askToConfirm(server, request, calling.getStore())
    if (answer !== true) notify('notice', `${request.tool}: not confirmed: ${answer.declined}`)
    return answer
  }

  const session = createSurface({ ...options, confirm: viaElicitation })
  const renderOptions = () => (session.roots[0] === undefined ? {} : { workspace: session.roots[0] })
  const served = new Set<string>(session.tools.map((t) => t.name))
  const servedList = session.tools.map((t) => t.name).join(', ')

  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    onePage(request)
    return { tools: toApiTools('mcp', session.tools) as never }
  })

  // The client's roots become the session's (see SPEC "Roots: where they come from"): asked after
  // `initialized` and again on each list_changed, in order; calls wait for the answer.
  const hostRoots = options.roots?.length ? [...session.roots] : null
  const ownRoots = [...session.roots]
  let rootsAsked: Promise<void> | null = null
  const applyRoots = (offered: readonly Root[]) => {
    const { accepted, refused, broad } = checkClientRoots(offered, hostRoots)
    if (refused.length > 0) notify('warning', `refused ${refused.length} of the client's roots: ${refused.join('; ')}`)
    for (const b of broad) notify('warning', `the client's root ${b} gives commands and the file tools everything under it`)
    const change = session.setRoots(accepted.length > 0 ? accepted : ownRoots)
    if (!change.isChanged) return
    const from = accepted.length > 0 ? 'from the client' : offered.length === 0 ? 'the client offers none' : "none of the client's was taken"
    notify('info', `roots: ${change.roots.length === 0 ? 'none' : change.roots.join(', ')} (${from})`)
    if (change.kept.length > 0) {
      notify(
        'notice',
        `background shells started under the previous roots keep running under them until stopped: ${change.kept.join(', ')}; new commands run under the new roots`,
      )
    }
  }
  const askRoots = (): Promise<void> => {
    if (server.getClientCapabilities()?.roots === undefined) return Promise.resolve()
    // Never rejects: a failure is a notice, and the roots stay as they were.
    rootsAsked = (rootsAsked ?? Promise.resolve()).then(() =>
      server
        .listRoots(undefined, { timeout: ROOTS_TIMEOUT_MS })
        .then((answer) => applyRoots(answer.roots))
        .catch((e: unknown) =>
          notify(
            'warning',
            `could not take the client's roots (${e instanceof Error ? e.message : String(e)}); roots stay ${session.roots.join(', ') || 'none'}`,
          ),
        ),
    )
    return rootsAsked
  }
  /** Resolves once the client's roots (when it offers any) are the session's. */
  const clientRoots = (): Promise<void> => rootsAsked ?? askRoots()
  /**
   * Once the roots are known, the session's shell runtime starts in the background (after what
   * is being answered now has gone out), so the first shell call does not wait for it: right
   * after `initialize` when the client offers no roots (the session's are the host's), else once
   * the client has answered `roots/list`. Not on `initialized`: a client sends its first call
   * right behind that notification, and the start would then share the call's time (measured:
   * the first call's server CPU 7.2 against 4.6 ms, `pnpm bench mcp`).
   */
  const prepare = () => setImmediate(() => session.prepare())
  afterInitialize(server, () => {
    if (server.getClientCapabilities()?.roots === undefined) prepare()
  })
  const onInitialized = () => {
    void clientRoots().then(() => {
      if (session.roots.length === 0) tell('warning', NO_ROOT_NOTICE)
      prepare()
    })
  }
  server.setNotificationHandler(RootsListChangedNotificationSchema, () => void askRoots().then(prepare))
  const initialized = server.oninitialized
  server.oninitialized = () => {
    initialized?.()
    onInitialized()
  }
  if (serverOptions.isInitialized === true) onInitialized()

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name } = request.params
    if (!served.has(name)) {
      const why = isToolName(name) ? `${name} is switched off by the host (toggle \`${SHELL_TOGGLE}\`)` : `Unknown tool: ${JSON.stringify(name)}`
      throw protocolError(ErrorCode.InvalidParams, `${why}; this server's tools are ${servedList}`, { tool: name, tools: [...served] })
    }
    await clientRoots()
    const outcome = await calling.run(extra.requestId, () => session.call(name, request.params.arguments ?? {}, { signal: extra.signal }))
    if (outcome.ok) {
      return {
        content: [{ type: 'text', text: renderOutcome(outcome, renderOptions()) }],
        structuredContent: outcome.result as Record<string, unknown>,
      }
    }
    if (REFUSALS.has(outcome.error.code)) notify('warning', `${name} refused (${outcome.error.code}): ${outcome.error.message}`)
    return {
      isError: true,
      content: [{ type: 'text', text: renderOutcome(outcome) }],
      _meta: { 'hands/error': outcome.error },
    }
  })

  server.setRequestHandler(ListResourcesRequestSchema, (request) => ({
    ...onePage(request),
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

  server.setRequestHandler(ListResourceTemplatesRequestSchema, (request) => ({
    ...onePage(request),
    resourceTemplates: [
      {
        uriTemplate: SHELL_URI_TEMPLATE,
        name: 'shell',
        title: 'Background shell output',
        description: `Every line a background shell's ring retains, oldest first; reading does not count as a shell_logs read. Ids are listed at ${SHELLS_URI}.`,
        mimeType: 'text/plain',
      },
    ],
  }))

  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const { uri } = request.params
    if (uri === SHELLS_URI) {
      return { contents: [{ uri, mimeType: 'application/json', text: `${JSON.stringify(session.resources(), null, 2)}\n` }] }
    }
    if (uri.startsWith(`${SHELLS_URI}/`)) {
      let id: string | null = null
      try {
        id = decodeURIComponent(uri.slice(SHELLS_URI.length + 1))
      } catch {
        // Not a valid escape: no shell has this id.
      }
      const lines = id === null ? null : session.retainedLines(id)
      if (lines !== null) return { contents: [{ uri, mimeType: 'text/plain', text: lines.join('\n') }] }
    }
    throw protocolError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}; this session's shells are listed at ${SHELLS_URI}`, { uri })
  })

  server.setRequestHandler(ListPromptsRequestSchema, (request) => ({ ...onePage(request), prompts: PROMPTS }))
  server.setRequestHandler(GetPromptRequestSchema, (request) => getPrompt(request.params.name, request.params.arguments ?? {}, options))

  const unsubscribe = session.onResourcesChanged(() => {
    server.sendResourceListChanged().catch(() => {
      // Not connected yet, or the client left: nothing to notify.
    })
  })

  let closing: Promise<void> | null = null
  return {
    server,
    session,
    notify,
    close: (why = 'the session ended') => {
      closing ??= (async () => {
        unsubscribe()
        const live = session.resources().filter((r) => r.status === 'running')
        if (live.length > 0) notify('notice', `${why}: stopping ${live.length} background shell(s): ${live.map((r) => r.id).join(', ')}`)
        await session.close()
        await server.close().catch(() => {})
      })()
      return closing
    },
  }
}

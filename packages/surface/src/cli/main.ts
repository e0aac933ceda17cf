#!/usr/bin/env node
/**
 * `hands serve | call | tools | contract | attach` — the installed bin, or `pnpm hands ...` from the repo root (no
 * build step). stdout carries results (or MCP protocol for `serve`); diagnostics go to stderr.
 * Each command loads what it uses: `serve` over stdio answers `initialize` on the MCP SDK alone
 * and loads the tools after; the tokenizer loads on the first token count.
 */
import { realpathSync, statSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { resolve } from 'node:path'
import { API_FORMATS, type ApiFormat } from '../adapters/api-tools.ts'
import { TOKEN_ENCODING } from '../adapters/token-cost.ts'
import type { AttachServer } from '../attach/server.ts'
import type { Confinement } from '@hands/shell-runtime'
import { defaultAttachDir } from '../attach/socket-dir.ts'
import type { SurfaceOptions } from '../session.ts'
import { attach } from './attach.ts'
import { SESSION_HELP, UsageError, parse, positiveInt, sessionOptions } from './args.ts'

const MAIN_HELP = `usage: hands <command> [options]

commands:
  serve        serve the tools over MCP (stdio by default, --http HOST:PORT for Streamable HTTP)
  call         run one tool call and print its result as JSON
  tools        list the enabled tools with their token cost
  contract     diff two versions of the contract surface (hands contract diff A B)
  attach       connect this terminal to a live background shell of a running server

Run \`hands <command> --help\` for a command's options.`

/** `serve --help`; the HTTP defaults come from the HTTP module, loaded only here and for --http. */
const serveHelp = async () => {
  const { DEFAULT_EVICT_IDLE_MS, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_MS } = await import('../mcp/http.ts')
  return `usage: hands serve [options]

Serve one hands session over MCP on stdio (default) or Streamable HTTP. Logs go to stderr.

  --http HOST:PORT      serve Streamable HTTP at http://HOST:PORT/mcp (loopback only unless --allow-remote)
  --allow-remote        allow a non-loopback --http bind
  --session-idle-ms N   HTTP: close a session (stopping its shells) after N ms without a request (default ${DEFAULT_SESSION_IDLE_MS})
  --max-sessions N      HTTP: sessions open at once (default ${DEFAULT_MAX_SESSIONS}); at the limit, one more initialize closes the least
                        recently used session idle for --evict-idle-ms with no running shell, else gets 503
  --evict-idle-ms N     HTTP: how long a session must be idle to be closed for a new one at the limit (default ${DEFAULT_EVICT_IDLE_MS})
  --max-body-bytes N    HTTP: the largest request body read; a larger one gets 413 (default ${DEFAULT_MAX_BODY_BYTES})
  --allow-host NAME     HTTP: also accept this Host header (NAME for NAME:PORT, or NAME:PORT; repeatable)
  --no-attach           offer no \`hands attach\` socket
  --attach-dir DIR      where the attach socket goes (default: ${defaultAttachDir()}; made 0700)
${SESSION_HELP}`
}

const CALL_HELP = `usage: hands call TOOL JSON [options]

Run one call against a fresh session and print the result object as JSON. A failure prints the
error envelope and exits 1. The session closes after the call, so a shell_background started
here is stopped at once; use \`serve\` for background work.
${SESSION_HELP}`

const TOOLS_HELP = `usage: hands tools [options]

List the enabled tools with what each costs the model on every request
(name + description + input schema, ${TOKEN_ENCODING} tokens).

  --format F            text (default), or the tool definitions as JSON: ${API_FORMATS.join(', ')}
${SESSION_HELP}`

async function serve(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, {
    http: { type: 'string' },
    'allow-remote': { type: 'boolean' },
    'session-idle-ms': { type: 'string' },
    'max-sessions': { type: 'string' },
    'evict-idle-ms': { type: 'string' },
    'max-body-bytes': { type: 'string' },
    'allow-host': { type: 'string', multiple: true },
    'no-attach': { type: 'boolean' },
    'attach-dir': { type: 'string' },
  })
  if (values.help) return help(await serveHelp())
  if (positionals.length > 0) throw new UsageError(`serve takes no arguments, got ${positionals.join(' ')}`)
  const options = sessionOptions(values)
  // The stdio server loads its session after the handshake: refuse a bad root before that.
  for (const root of options.roots ?? []) {
    if (!statSync(root, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`--root ${root} is not a directory`)
  }
  sayWhereRootsComeFrom(options)
  // A custom attach directory is hidden from commands too (the default ones always are).
  if (values['attach-dir'] !== undefined && values['no-attach'] !== true) options.privateDirs = [values['attach-dir']]
  // Every confinement setting the host gave must hold here before anything is served (a mechanism
  // by name, the network cut, hidden paths, limits); plain `auto` cannot fail to start, so it is
  // described once the tools are loaded.
  const isAsked =
    (options.confine !== undefined && options.confine !== 'auto') ||
    options.network === false ||
    options.denyRead !== undefined ||
    options.memoryLimit !== undefined ||
    options.processLimit !== undefined
  const named = isAsked ? await confinementOf(options) : undefined
  if (values.http === undefined) {
    for (const flag of ['allow-remote', 'session-idle-ms', 'max-sessions', 'evict-idle-ms', 'max-body-bytes', 'allow-host'] as const) {
      if (values[flag] !== undefined) throw new UsageError(`--${flag} applies to --http only`)
    }
    // The attach socket starts beside the handshake, not before it.
    const attaching = offerAttach(values)
    const { serveStdio } = await import('../mcp/stdio.ts')
    await serveStdio(options, attaching)
    await sayHowShellsRun(options, named)
    return -1
  }
  const { serveHttp, parseListen } = await import('../mcp/http.ts')
  const listen = parseListen(values.http)
  const sessionIdleMs = positiveInt('session-idle-ms', values['session-idle-ms'])
  const maxSessions = positiveInt('max-sessions', values['max-sessions'])
  const evictIdleMs = positiveInt('evict-idle-ms', values['evict-idle-ms'])
  const maxBodyBytes = positiveInt('max-body-bytes', values['max-body-bytes'])
  const allowHosts = values['allow-host'] ?? []
  const attachServer = await offerAttach(values)
  let running: Awaited<ReturnType<typeof serveHttp>>
  try {
    running = await serveHttp(
      {
        ...listen,
        allowRemote: values['allow-remote'] === true,
        ...(sessionIdleMs !== undefined ? { sessionIdleMs } : {}),
        ...(maxSessions !== undefined ? { maxSessions } : {}),
        ...(evictIdleMs !== undefined ? { evictIdleMs } : {}),
        ...(maxBodyBytes !== undefined ? { maxBodyBytes } : {}),
        ...(allowHosts.length > 0 ? { allowHosts } : {}),
      },
      options,
      attachServer,
    )
  } catch (e) {
    await attachServer?.close()
    throw e
  }
  process.stderr.write(`hands: serving MCP over Streamable HTTP at ${running.url}\n`)
  await sayHowShellsRun(options, named)
  const stop = async (why: string) => {
    process.stderr.write(`hands: ${why}; stopping shells and exiting\n`)
    await running.close()
    process.exit(0)
  }
  process.on('SIGINT', () => void stop('SIGINT'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
  return -1
}

/** `/` or the home directory, as a root: what it is called in a warning; null for any other directory. */
function broadRoot(dir: string): string | null {
  const real = realOr(resolve(dir))
  if (real === '/') return '/ (the whole filesystem)'
  return real === realOr(homedir()) ? `${dir} (your home directory)` : null
}

function realOr(path: string): string {
  try {
    return realpathSync.native(path)
  } catch {
    return path
  }
}

/**
 * Say once, on stderr, when the roots are broad or missing: a `--root` that is `/` or the home
 * directory works, with a warning; without `--root`, started in one of them, the server serves
 * no root until a client offers roots, and every tool call is refused until then.
 */
function sayWhereRootsComeFrom(options: SurfaceOptions): void {
  for (const root of options.roots ?? []) {
    const broad = broadRoot(root)
    if (broad !== null)
      process.stderr.write(`hands: warning: --root ${broad} lets commands and the file tools reach everything under it
`)
  }
  if (options.roots?.length) return
  const broad = broadRoot(process.cwd())
  if (broad === null) return
  process.stderr.write(
    `hands: started in ${broad} without --root: that is never a default root, so this server has no root until an MCP client offers roots, and every tool call is refused until then. Give --root DIR (in the client's configuration for hands) for a fixed one.
`,
  )
}

/** How commands will be confined (null with --no-shell); an explicit mechanism that cannot work here is a usage error. */
async function confinementOf(options: SurfaceOptions): Promise<Confinement | null> {
  if (options.toggles?.shell === false) return null
  const [{ describeConfinement }, { shellConfinement }] = await Promise.all([import('@hands/shell-runtime'), import('../session.ts')])
  try {
    // Without a root yet (a client's roots come later), the mechanism is described for the temp directory.
    const roots = options.roots ?? (broadRoot(process.cwd()) === null ? [process.cwd()] : [tmpdir()])
    return describeConfinement({ roots, ...shellConfinement(options) })
  } catch (e) {
    throw new UsageError((e as Error).message)
  }
}

/** Start the attach socket unless `--no-attach`, and say where it is; a failure is reported and serving goes on without it. */
async function offerAttach(values: { 'no-attach'?: boolean; 'attach-dir'?: string }): Promise<AttachServer | null> {
  if (values['no-attach'] === true) return null
  try {
    const { startAttachServer } = await import('../attach/server.ts')
    const server = await startAttachServer(values['attach-dir'] ?? defaultAttachDir(), (line) => process.stderr.write(`${line}\n`))
    process.stderr.write(`hands: background shells can be attached to with \`hands attach ID\` (socket ${server.path}; --no-attach offers none)\n`)
    return server
  } catch (e) {
    process.stderr.write(`hands: not offering attach: ${(e as Error).message}\n`)
    return null
  }
}

/** Say once, on stderr, how commands are confined (`known` when already described), and why background shells cannot start here (and how to fix it) when node-pty is missing. */
async function sayHowShellsRun(options: SurfaceOptions, known?: Confinement | null): Promise<void> {
  const confinement = known === undefined ? await confinementOf(options) : known
  if (confinement === null) return
  process.stderr.write(
    `${confinement.summary
      .split('\n')
      .map((l) => `hands: ${l}\n`)
      .join('')}`,
  )
  const [{ SHELL_BACKGROUND }, { PTY_FIX, ptyProblem }] = await Promise.all([import('@hands/contracts'), import('@hands/shell-runtime')])
  const problem = ptyProblem()
  if (problem !== null)
    process.stderr.write(`hands: background shells are unavailable (${SHELL_BACKGROUND} returns pty_unavailable): ${problem}. To fix: ${PTY_FIX}.\n`)
}

async function call(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, {})
  if (values.help) return help(CALL_HELP)
  const [tool, json, ...rest] = positionals
  if (tool === undefined || json === undefined || rest.length > 0)
    throw new UsageError('call takes exactly TOOL and JSON, e.g. hands call file_exists \'{"paths":["."]}\'')
  let input: unknown
  try {
    input = JSON.parse(json)
  } catch (e) {
    throw new UsageError(`JSON is not valid: ${(e as Error).message}`)
  }
  const { createSurface } = await import('../session.ts')
  const session = createSurface(sessionOptions(values))
  try {
    const outcome = await session.call(tool, input)
    process.stdout.write(`${JSON.stringify(outcome.ok ? outcome.result : outcome.error, null, 2)}\n`)
    return outcome.ok ? 0 : 1
  } finally {
    await session.close()
  }
}

async function tools(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { format: { type: 'string' } })
  if (values.help) return help(TOOLS_HELP)
  if (positionals.length > 0) throw new UsageError(`tools takes no arguments, got ${positionals.join(' ')}`)
  const options = sessionOptions(values)
  const [{ enabledTools, codeToolOf }, { toApiTools, toolCost }, { TOOLS }] = await Promise.all([
    import('../session.ts'),
    import('../adapters/index.ts'),
    import('@hands/contracts'),
  ])
  const enabled = enabledTools(options)
  const format = values.format ?? 'text'
  if (format !== 'text') {
    if (!(API_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format takes text or ${API_FORMATS.join(', ')}, got ${format}`)
    process.stdout.write(`${JSON.stringify(toApiTools(format as ApiFormat, enabled), null, 2)}\n`)
    return 0
  }
  let total = 0
  for (const t of enabled) {
    const { tokens } = toolCost({ name: t.name, description: t.description, input_schema: t.input })
    total += tokens
    process.stdout.write(`${t.name.padEnd(18)} ${String(tokens).padStart(5)}  ${t.title}\n`)
  }
  const codeTool = codeToolOf(options.codeTool)
  const prose = codeTool === null ? 'descriptions for a harness without a code tool' : `descriptions naming the code tool ${codeTool}`
  process.stdout.write(`${'total'.padEnd(18)} ${String(total).padStart(5)}  ${enabled.length} of ${TOOLS.length} tools, ${TOKEN_ENCODING} tokens, ${prose}\n`)
  const confinement = await confinementOf(options)
  if (confinement !== null)
    process.stdout.write(
      `\n${confinement.summary
        .split('\n')
        .map((l) => `${l}\n`)
        .join('')}`,
    )
  return 0
}

function help(text: string): number {
  process.stdout.write(`${text}\n`)
  return 0
}

// Loaded on demand: the contract diff is not needed to serve or call tools.
const contract = async (argv: string[]) => (await import('./contract.ts')).contract(argv)

const COMMANDS: Record<string, (argv: string[]) => number | Promise<number>> = { serve, call, tools, contract, attach }

async function main(argv: string[]): Promise<number> {
  // `pnpm hands` (the repo's script) runs in the repo root; INIT_CWD is where the user typed it.
  const initCwd = process.env['INIT_CWD']
  if (process.env['npm_lifecycle_event'] === 'hands' && initCwd !== undefined && initCwd !== '' && initCwd !== process.cwd()) process.chdir(initCwd)
  const [command, ...rest] = argv
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') return help(MAIN_HELP)
  const run = COMMANDS[command]
  if (run === undefined) throw new UsageError(`unknown command ${JSON.stringify(command)}`)
  return run(rest)
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code
  },
  (e: unknown) => {
    if (e instanceof UsageError) {
      process.stderr.write(`hands: ${e.message}\nRun \`hands --help\` for usage.\n`)
      process.exitCode = 2
    } else {
      process.stderr.write(`hands: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
      process.exitCode = 1
    }
  },
)

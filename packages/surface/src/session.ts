import {
  CODE_TOOL,
  CONTRACTS,
  SHELL_TOGGLE,
  checkInput,
  describeTool,
  isToolName,
  renderPrompt,
  toErrorEnvelope,
  ToolError,
  type PromptProse,
  type ToolContract,
  type ToolDescriptor,
  type ToolName,
} from '@hands/contracts'
import { createFsRuntime, type PathGate } from '@hands/fs-runtime'
import {
  captureLoginEnvironment,
  createShellRuntime,
  describeConfinement,
  pickLimits,
  type Confinement,
  type ConfineMode,
  type LoginEnvironment,
  type ScreenView,
  type ShellAttachment,
  type ShellLimits,
  type ShellResource,
  type ShellRuntime,
  type ShellRuntimeOptions,
  type ShellWatcher,
} from '@hands/shell-runtime'
import type { AfterCallHook, BeforeCallHook, CallInfo, ConfirmHook } from './hooks.ts'
import { failure, invalidInput, type CallOutcome } from './outcome.ts'

/** Host settings for one session, the shell runtime's disk and memory limits among them. None of them is ever a tool parameter. */
export interface SurfaceOptions extends ShellLimits {
  /** Allowed roots; the first is the workspace root. Default: the current directory. */
  roots?: string[]
  /** Host toggles. `shell: false` removes all five shell tools (default on). */
  toggles?: { shell?: boolean }
  /** The harness's code tool, named in descriptions and prompt prose (default `python_execution`); null when it has none, and no sentence names one. */
  codeTool?: string | null
  /** shell_run's safety bound per call, in ms (default 120000). */
  runBoundMs?: number
  /** Bytes of head and of tail kept per stream by shell_run (default 16 KiB each). */
  headBytes?: number
  tailBytes?: number
  /** Lines a background shell's ring keeps (default 10,000). */
  ringLines?: number
  /** Grace between SIGTERM and SIGKILL when stopping a tree, in ms (default 2000). */
  stopGraceMs?: number
  /** Extra environment variable names passed through to commands. */
  envAllow?: string[]
  /** How commands are confined to the roots: `auto` (default), `landlock`, `bwrap` or `off`. */
  confine?: ConfineMode
  /** Extra directories commands may write under (say a package manager's cache). */
  allowWrite?: string[]
  /** Extra paths hidden from commands, beside the usual secret stores. */
  denyRead?: string[]
  /** TCP for commands (default true); false refuses TCP bind and connect. */
  network?: boolean
  /**
   * The login environment commands start from, when the host captured it already (see
   * `shareLoginEnvironment`); without it the session runs `bash -l` once, on its first command.
   */
  loginEnv?: () => Promise<LoginEnvironment>
  /** Asked before every destructive act; may decline (`not_confirmed`). */
  confirm?: ConfirmHook
  /** Path access gates, consulted by every fs tool and every shell `cwd`. */
  gates?: PathGate[]
  /** May refuse any call before it runs. */
  beforeCall?: BeforeCallHook
  /** Observes every call after it finished. */
  afterCall?: AfterCallHook
}

/** One hands session: the enabled tools, a way to call them, and the live shells. */
export interface Session {
  /** Descriptors of the enabled tools, in SPEC order. */
  readonly tools: readonly ToolDescriptor[]
  /** The prompt prose for exactly the enabled tools. */
  readonly prompt: PromptProse
  /** The allowed roots, real paths, workspace root first. */
  readonly roots: readonly string[]
  /** How commands are confined (known before the first command starts the runtime); null when the shell toggle is off. */
  readonly confinement: Confinement | null
  /** Validate, then run one tool. Never rejects for a tool failure. */
  call<N extends ToolName>(name: N, input: unknown): Promise<CallOutcome<N>>
  call(name: string, input: unknown): Promise<CallOutcome>
  /** Background shells of this session, live and exited. Empty when the shell toggle is off, and until the first shell call starts the shell runtime. */
  resources(): ShellResource[]
  /** Every line a shell's ring retains (oldest first), without counting as a read; null for an unknown id. */
  retainedLines(id: string): string[] | null
  /** The visible screen of a background shell; null for an unknown id or with the shell toggle off. */
  screen(id: string): ScreenView | null
  /** A person's attachment to a running background shell's terminal (see `hands attach`); null when there is none to attach to. */
  attach(id: string, watcher: ShellWatcher): ShellAttachment | null
  /** Called whenever the list of shells changes; returns an unsubscribe function. */
  onResourcesChanged(listener: () => void): () => void
  /** Stop every shell and release the session. Idempotent. */
  close(): Promise<void>
}

type Runner = (input: Record<string, unknown>) => Promise<unknown>

/** The contracts a host's toggles leave enabled, in SPEC order. */
export function enabledContracts(options: Pick<SurfaceOptions, 'toggles'> = {}): readonly ToolContract[] {
  const isShell = options.toggles?.shell ?? true
  return CONTRACTS.filter((c) => c.toggle !== SHELL_TOGGLE || isShell) as readonly ToolContract[]
}

/** The code tool prose names: the host's (null for none), else the default. */
export function codeToolOf(codeTool: string | null | undefined): string | null {
  return codeTool === undefined ? CODE_TOOL : codeTool
}

/** Descriptors of the enabled tools with prose for the host's code tool, without starting any runtime. */
export function enabledTools(options: Pick<SurfaceOptions, 'toggles' | 'codeTool'> = {}): ToolDescriptor[] {
  const prose = { codeTool: codeToolOf(options.codeTool) }
  return enabledContracts(options).map((c) => describeTool(c, prose))
}

/** The confinement options of the shell runtime, from the surface's. */
export function shellConfinement(options: SurfaceOptions): Pick<SurfaceOptions, 'confine' | 'allowWrite' | 'denyRead' | 'network'> {
  return {
    ...(options.confine !== undefined ? { confine: options.confine } : {}),
    ...(options.allowWrite ? { allowWrite: options.allowWrite } : {}),
    ...(options.denyRead ? { denyRead: options.denyRead } : {}),
    ...(options.network !== undefined ? { network: options.network } : {}),
  }
}

const rootsOf = (options: SurfaceOptions) => (options.roots?.length ? options.roots : [process.cwd()])

/** The shell runtime's options from the session's. */
function shellOptions(options: SurfaceOptions): ShellRuntimeOptions {
  return {
    roots: rootsOf(options),
    ...(options.gates ? { gates: options.gates } : {}),
    ...(options.envAllow ? { envAllow: options.envAllow } : {}),
    ...(options.runBoundMs !== undefined ? { runBoundMs: options.runBoundMs } : {}),
    ...(options.headBytes !== undefined ? { headBytes: options.headBytes } : {}),
    ...(options.tailBytes !== undefined ? { tailBytes: options.tailBytes } : {}),
    ...(options.ringLines !== undefined ? { ringLines: options.ringLines } : {}),
    ...(options.stopGraceMs !== undefined ? { stopGraceMs: options.stopGraceMs } : {}),
    ...(options.loginEnv ? { loginEnv: options.loginEnv } : {}),
    ...pickLimits(options),
    ...shellConfinement(options),
  }
}

/**
 * Start capturing the login environment now, in the background, once for every session made
 * with the options returned (they carry it as `loginEnv`). A session's first command waits for
 * the capture only while it is still running; it is never captured again. Aborting `signal`
 * stops a capture still running (sessions then start from the host's allowed variables). Options
 * that already carry a `loginEnv`, or switch the shell tools off, come back as they are.
 */
export function shareLoginEnvironment(options: SurfaceOptions = {}, signal?: AbortSignal): SurfaceOptions {
  if (options.loginEnv !== undefined || !(options.toggles?.shell ?? true)) return options
  const captured = captureLoginEnvironment(shellOptions(options), signal)
  captured.catch(() => {
    // Each session that asks sees the failure itself.
  })
  return { ...options, loginEnv: () => captured }
}

/** Create a session with its runtimes. */
export function createSurface(options: SurfaceOptions = {}): Session {
  const roots = rootsOf(options)
  const isShell = options.toggles?.shell ?? true
  const enabled = enabledContracts(options)
  const tools = enabledTools(options)

  const fs = createFsRuntime({
    roots,
    ...(options.gates ? { gates: options.gates } : {}),
    ...(options.confirm ? { confirm: options.confirm } : {}),
  })
  // How commands will be confined, known before the runtime starts (an explicit mechanism that
  // cannot work here throws now, as a host configuration error).
  const confinement = isShell ? describeConfinement(shellOptions(options)) : null
  // The shell runtime (its spool folder, cgroup and reaper) starts with the first shell call.
  let shell: ShellRuntime | null = null
  const listeners = new Set<() => void>()
  const shellRuntime = (): ShellRuntime => {
    if (shell !== null) return shell
    if (closed !== null)
      throw new ToolError({ code: 'disabled', message: 'this hands session is closed', hint: 'Open a new session to call tools.', is_preflight: true })
    shell = createShellRuntime(shellOptions(options))
    shell.onResourcesChanged(() => {
      for (const l of listeners) l()
    })
    return shell
  }
  let closed: Promise<void> | null = null

  const runners: Partial<Record<ToolName, Runner>> = {
    copy: (i) => fs.copy(i as never),
    move: (i) => fs.move(i as never),
    delete: (i) => fs.delete(i as never),
    create_directory: (i) => fs.create_directory(i as never),
    file_exists: (i) => fs.file_exists(i as never),
  }
  if (isShell) {
    runners.shell_run = (i) => shellRuntime().shell_run(i as never)
    runners.shell_background = (i) => shellRuntime().shell_background(i as never)
    runners.shell_logs = (i) => shellRuntime().shell_logs(i as never)
    runners.shell_type = (i) => shellRuntime().shell_type(i as never)
    runners.shell_stop = (i) => shellRuntime().shell_stop(i as never)
  }

  async function call(name: string, input: unknown): Promise<CallOutcome> {
    if (closed !== null) {
      return failure(name, {
        code: 'disabled',
        message: 'this hands session is closed',
        hint: 'Open a new session to call tools.',
        is_preflight: true,
      })
    }
    if (!isToolName(name)) {
      return failure(name, {
        code: 'unknown_tool',
        message: `there is no tool named ${JSON.stringify(name)}`,
        hint: `Tools here: ${tools.map((t) => t.name).join(', ')}.`,
        is_preflight: true,
      })
    }
    const contract = enabled.find((c) => c.name === name)
    const run = runners[name]
    if (contract === undefined || run === undefined) {
      return failure(name, {
        code: 'disabled',
        message: `${name} is switched off by the host (toggle \`${SHELL_TOGGLE}\`)`,
        hint: `Tools here: ${tools.map((t) => t.name).join(', ')}.`,
        is_preflight: true,
      })
    }
    const checked = checkInput(contract, input)
    if (!checked.ok) return invalidInput(name, checked.issues)
    const info: CallInfo = { tool: name, input: checked.value as Record<string, unknown>, effect: contract.effect }
    const started = performance.now()
    const outcome = await invoke(info, run)
    if (options.afterCall) {
      try {
        await options.afterCall({ ...info, outcome, duration_ms: Math.round(performance.now() - started) })
      } catch (e) {
        process.stderr.write(`hands: afterCall hook failed for ${name}: ${String(e)}\n`)
      }
    }
    return outcome
  }

  async function invoke(info: CallInfo, run: Runner): Promise<CallOutcome> {
    if (options.beforeCall) {
      let verdict: void | { refuse: string }
      try {
        verdict = await options.beforeCall(info)
      } catch (e) {
        verdict = { refuse: e instanceof Error ? e.message : String(e) }
      }
      if (verdict && typeof verdict.refuse === 'string') {
        return failure(info.tool, {
          code: 'refused',
          message: `${info.tool} was refused by the host: ${verdict.refuse}`,
          hint: 'The host policy decides this; a different call may be allowed.',
          is_preflight: true,
        })
      }
    }
    try {
      const result = await run(info.input)
      return { ok: true, tool: info.tool, result } as CallOutcome
    } catch (thrown) {
      return { ok: false, tool: info.tool, error: toErrorEnvelope(info.tool, thrown) }
    }
  }

  return {
    tools,
    prompt: renderPrompt({ codeTool: codeToolOf(options.codeTool), isShell }),
    roots: fs.roots,
    get confinement() {
      return shell?.confinement ?? confinement
    },
    call: call as Session['call'],
    resources: () => (shell === null ? [] : shell.resources()),
    retainedLines: (id) => (shell === null ? null : shell.retainedLines(id)),
    screen: (id) => (shell === null ? null : shell.screen(id)),
    attach: (id, watcher) => (shell === null || closed !== null ? null : shell.attach(id, watcher)),
    onResourcesChanged: (listener) => {
      const l = () => listener()
      listeners.add(l)
      return () => {
        listeners.delete(l)
      }
    },
    close: () => {
      closed ??= (shell === null ? Promise.resolve() : shell.close()).finally(() => listeners.clear())
      return closed
    },
  }
}

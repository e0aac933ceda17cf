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
import { realpathSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { resolve } from 'node:path'
import { createFsRuntime, type FsRuntime, type PathGate } from '@hands/fs-runtime'
import {
  captureLoginEnvironment,
  createShellRuntime,
  describeConfinement,
  freeId,
  pickLimits,
  programName,
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
  /**
   * Allowed roots; the first is the workspace root. Default: the current directory, unless it is
   * `/` or the user's home directory, which are never a default root: the session then has no
   * root until `setRoots` gives it one, and refuses every call (`outside_roots`).
   */
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
  /** Socket files (or directories of them) commands may connect to beside those under the roots and TMPDIR (say an ssh-agent's); every other host socket is refused. */
  allowSockets?: string[]
  /** Extra paths hidden from commands, beside the usual secret stores. */
  denyRead?: string[]
  /** The network for commands (default true); false gives them none (no socket but UNIX ones under Landlock, a network namespace of their own under bubblewrap). */
  network?: boolean
  /** Report what each command changes on disk (default true); false leaves the observer out, and results say so. */
  changes?: boolean
  /** Memory all of a session's commands may use together, in bytes (a cgroup; see docs/confinement.md). */
  memoryLimit?: number
  /** Processes all of a session's commands may have at once (a cgroup). */
  processLimit?: number
  /** hands' own directories commands must not read, beside the default attach directories (a custom attach directory). */
  privateDirs?: string[]
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
  /** The allowed roots, real paths, workspace root first; empty when the session has no root (every call is refused). */
  readonly roots: readonly string[]
  /** How commands are confined (known before the first command starts the runtime); null when the shell toggle is off. */
  readonly confinement: Confinement | null
  /** Validate, then run one tool. Never rejects for a tool failure. */
  call<N extends ToolName>(name: N, input: unknown, options?: CallOptions): Promise<CallOutcome<N>>
  call(name: string, input: unknown, options?: CallOptions): Promise<CallOutcome>
  /**
   * Serve these roots from now on (real paths; empty for none): every later call resolves paths
   * and runs commands under them. A command already running finishes under the roots it started
   * with; background shells started under earlier roots keep running under those (the kernel
   * confines a process for its whole life), stay listed and reachable by id, and their runtime
   * is released once they are all stopped. Throws a TypeError for a root that is not a directory.
   */
  setRoots(roots: readonly string[]): RootsChange
  /**
   * Start the shell runtime of the current roots now (spool folder, cgroup, reaper registration),
   * and in the background what its first command would otherwise start on its way (its spawner,
   * its ruleset keeper), so the first shell call finds them ready. Nothing happens with the
   * shell toggle off, with no root, once closed, or when the runtime is already started; a
   * runtime that fails to start is left for the first shell call to report. close() frees all of
   * it, started or still starting.
   */
  prepare(): void
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

/** How one call is driven by its caller. */
export interface CallOptions {
  /** Aborting cancels the call: a running `shell_run` command is stopped with its whole tree (see ShellRunOptions). */
  signal?: AbortSignal
}

/** What `setRoots` did. */
export interface RootsChange {
  /** The roots now served (real paths, workspace first); empty for none. */
  roots: readonly string[]
  /** False when the roots were already these (nothing changed). */
  isChanged: boolean
  /** Background shells that keep running under the roots they started with (none when nothing changed). */
  kept: string[]
}

type Runner = (input: Record<string, unknown>, options: CallOptions) => Promise<unknown>

/** The runtimes that serve one set of roots. */
interface Generation {
  /** Real paths; empty for none. */
  roots: readonly string[]
  /** Null when there is no root. */
  fs: FsRuntime | null
  /** Started by the first shell call under these roots. */
  shell: ShellRuntime | null
  /** Shell calls running on this generation now. */
  calls: number
  /** How commands are (or will be) confined under these roots; undefined until asked. */
  confinement: Confinement | null | undefined
}

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
export function shellConfinement(
  options: SurfaceOptions,
): Pick<SurfaceOptions, 'confine' | 'allowWrite' | 'allowSockets' | 'denyRead' | 'network' | 'changes' | 'memoryLimit' | 'processLimit' | 'privateDirs'> {
  return {
    ...(options.confine !== undefined ? { confine: options.confine } : {}),
    ...(options.allowWrite ? { allowWrite: options.allowWrite } : {}),
    ...(options.allowSockets ? { allowSockets: options.allowSockets } : {}),
    ...(options.denyRead ? { denyRead: options.denyRead } : {}),
    ...(options.network !== undefined ? { network: options.network } : {}),
    ...(options.changes !== undefined ? { changes: options.changes } : {}),
    ...(options.memoryLimit !== undefined ? { memoryLimit: options.memoryLimit } : {}),
    ...(options.processLimit !== undefined ? { processLimit: options.processLimit } : {}),
    ...(options.privateDirs ? { privateDirs: options.privateDirs } : {}),
  }
}

/** True for `/` and the user's home directory, which are never taken as a root by default. */
export function isTooBroadForDefault(dir: string): boolean {
  const real = realOrGiven(resolve(dir))
  return real === '/' || real === realOrGiven(homedir())
}

function realOrGiven(path: string): string {
  try {
    return realpathSync.native(path)
  } catch {
    return path
  }
}

/** The roots a session starts with: the host's, else the current directory unless it is `/` or home (then none). */
const rootsOf = (options: SurfaceOptions): string[] => {
  if (options.roots?.length) return options.roots
  return isTooBroadForDefault(process.cwd()) ? [] : [process.cwd()]
}

/** The shell runtime's options from the session's, for `roots` (default: the session's first roots). */
function shellOptions(options: SurfaceOptions, roots: readonly string[] = rootsOf(options)): ShellRuntimeOptions {
  return {
    roots: [...roots],
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
  // With no root yet (roots come from the client later), the login shell runs in the temp directory.
  const roots = rootsOf(options)
  const captured = captureLoginEnvironment(shellOptions(options, roots.length > 0 ? roots : [tmpdir()]), signal)
  captured.catch(() => {
    // Each session that asks sees the failure itself.
  })
  return { ...options, loginEnv: () => captured }
}

/** Why a session with no root refuses a call. */
const NO_ROOT = {
  code: 'outside_roots',
  message: 'this session has no root, so no path is inside one and no command can run',
  hint: 'The host gives roots: `hands serve --root DIR` (or an MCP client that offers roots), `roots` for the library. `/` and the home directory are never a default root.',
  is_preflight: true,
} as const

/** Create a session with its runtimes. */
export function createSurface(options: SurfaceOptions = {}): Session {
  const isShell = options.toggles?.shell ?? true
  const enabled = enabledContracts(options)
  const tools = enabledTools(options)
  const listeners = new Set<() => void>()
  const changed = () => {
    for (const l of listeners) l()
  }
  let closed: Promise<void> | null = null

  const generation = (roots: readonly string[]): Generation => {
    const fs =
      roots.length === 0
        ? null
        : createFsRuntime({
            roots: [...roots],
            ...(options.gates ? { gates: options.gates } : {}),
            ...(options.confirm ? { confirm: options.confirm } : {}),
          })
    return { roots: fs?.roots ?? [], fs, shell: null, calls: 0, confinement: undefined }
  }
  const confinementOf = (g: Generation): Confinement | null => {
    if (!isShell || g.roots.length === 0) return null
    if (g.shell !== null) return g.shell.confinement
    g.confinement ??= describeConfinement(shellOptions(options, g.roots))
    return g.confinement
  }

  /** The generation new calls go to. */
  let current = generation(rootsOf(options))
  // How commands will be confined, known before the runtime starts (an explicit mechanism that
  // cannot work here throws now, as a host configuration error).
  confinementOf(current)
  /** Earlier generations whose background shells are still held (running, or exited and not yet stopped). */
  const retired: Generation[] = []
  /** Runtimes being released. */
  const releasing = new Set<Promise<void>>()

  // A generation's shell runtime (spool folder, cgroup, reaper registration) starts with its first shell call.
  const shellOf = (g: Generation): ShellRuntime => {
    if (g.shell !== null) return g.shell
    if (closed !== null)
      throw new ToolError({ code: 'disabled', message: 'this hands session is closed', hint: 'Open a new session to call tools.', is_preflight: true })
    g.shell = createShellRuntime(shellOptions(options, g.roots))
    g.shell.onResourcesChanged(changed)
    return g.shell
  }
  const release = (g: Generation) => {
    const closing = (g.shell?.close() ?? Promise.resolve()).catch(() => undefined)
    releasing.add(closing)
    void closing.finally(() => releasing.delete(closing))
  }
  /** Release a retired generation once it holds no shell and runs no call. */
  const prune = (g: Generation) => {
    const at = retired.indexOf(g)
    if (at < 0 || g.calls > 0 || (g.shell?.resources().length ?? 0) > 0) return
    retired.splice(at, 1)
    release(g)
  }
  /** Run `work` on generation `g`'s shell runtime, counted as in flight on it. */
  const onShell = async <T>(g: Generation, work: (shell: ShellRuntime) => Promise<T>): Promise<T> => {
    const shell = shellOf(g)
    g.calls++
    try {
      return await work(shell)
    } finally {
      g.calls--
      prune(g)
    }
  }
  /** Every generation with a shell runtime, oldest first. */
  const withShells = (): Generation[] => [...retired, current].filter((g) => g.shell !== null)
  /** The generation that holds the shell `id`: the newest one that lists it, else the current one. */
  const ownerOf = (id: string): Generation => {
    for (const g of withShells().reverse()) if (g.shell?.resources().some((r) => r.id === id)) return g
    return current
  }
  /**
   * Run a call about the shell `id` on the generation that holds it. An id no generation holds,
   * while earlier ones hold shells, is refused here, listing every shell of the session.
   */
  const byId = <T>(input: Record<string, unknown>, work: (shell: ShellRuntime) => Promise<T>): Promise<T> => {
    const id = input['id'] as string
    const owner = ownerOf(id)
    if (retired.length > 0 && !(owner.shell?.resources().some((r) => r.id === id) ?? false)) {
      const all = allResources()
      const live = all.filter((r) => r.status === 'running').map((r) => `\`${r.id}\``)
      const exited = all.filter((r) => r.status !== 'running').map((r) => `\`${r.id}\``)
      const hint = `Live ids: ${live.length === 0 ? 'none' : live.join(', ')}${exited.length > 0 ? `; exited: ${exited.join(', ')}` : ''}.`
      throw new ToolError({ code: 'unknown_id', message: `No background shell has id \`${id}\`.`, hint, is_preflight: true })
    }
    return onShell(owner, work)
  }
  const allResources = (): ShellResource[] => withShells().flatMap((g) => g.shell?.resources() ?? [])
  const isRunningAnywhere = (id: string) => withShells().some((g) => g.shell?.resources().some((r) => r.id === id && r.status === 'running'))

  /**
   * shell_background with earlier generations still holding shells: a live shell of the same
   * script, or the live shell named by `id`, is answered by the generation that runs it; a new
   * shell starts under the current roots with an id no live shell has, and an exited shell of that
   * id elsewhere is dropped (as a new shell replaces an exited one of its id).
   */
  const background = async (input: Record<string, unknown>): Promise<unknown> => {
    if (retired.length === 0) return onShell(current, (shell) => shell.shell_background(input as never))
    const commands = input['commands'] as string[]
    let id = input['id'] as string | undefined
    if (id === undefined) {
      const cwd = realOrGiven(resolve(current.roots[0] as string, (input['cwd'] as string | undefined) ?? '.'))
      for (const g of retired) {
        const same = g.shell?.resources().find((r) => r.status === 'running' && r.cwd === cwd && r.commands.join('\n') === commands.join('\n'))
        if (same !== undefined) return onShell(g, (shell) => shell.shell_background({ commands, id: same.id, cwd: same.cwd }))
      }
      id = freeId(programName(commands[0] as string), isRunningAnywhere)
    } else {
      const live = retired.find((g) => g.shell?.resources().some((r) => r.id === id && r.status === 'running'))
      if (live !== undefined) return onShell(live, (shell) => shell.shell_background(input as never))
    }
    for (const g of [...retired]) {
      if (g.shell?.resources().some((r) => r.id === id)) await onShell(g, (shell) => shell.shell_stop({ id: id as string }))
    }
    return onShell(current, (shell) => shell.shell_background({ ...input, id } as never))
  }

  const runners: Partial<Record<ToolName, Runner>> = {
    copy: (i) => (current.fs as FsRuntime).copy(i as never),
    move: (i) => (current.fs as FsRuntime).move(i as never),
    delete: (i) => (current.fs as FsRuntime).delete(i as never),
    create_directory: (i) => (current.fs as FsRuntime).create_directory(i as never),
    file_exists: (i) => (current.fs as FsRuntime).file_exists(i as never),
  }
  if (isShell) {
    runners.shell_run = (i, call) => onShell(current, (shell) => shell.shell_run(i as never, call.signal === undefined ? {} : { signal: call.signal }))
    runners.shell_background = background
    runners.shell_logs = (i) => byId(i, (shell) => shell.shell_logs(i as never))
    runners.shell_type = (i) => byId(i, (shell) => shell.shell_type(i as never))
    runners.shell_stop = (i) => byId(i, (shell) => shell.shell_stop(i as never))
  }

  function setRoots(roots: readonly string[]): RootsChange {
    if (closed !== null) throw new Error('this hands session is closed')
    const next = generation(roots)
    if (next.roots.length === current.roots.length && next.roots.every((r, i) => r === current.roots[i]))
      return { roots: current.roots, isChanged: false, kept: [] }
    const old = current
    current = next
    const kept = old.shell?.resources().map((r) => r.id) ?? []
    if (old.shell !== null) {
      retired.push(old)
      prune(old)
    }
    return { roots: current.roots, isChanged: true, kept }
  }

  async function call(name: string, input: unknown, callOptions: CallOptions = {}): Promise<CallOutcome> {
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
    if (current.roots.length === 0) return failure(name, NO_ROOT)
    const info: CallInfo = { tool: name, input: checked.value as Record<string, unknown>, effect: contract.effect }
    const started = performance.now()
    const outcome = await invoke(info, run, callOptions)
    if (options.afterCall) {
      try {
        await options.afterCall({ ...info, outcome, duration_ms: Math.round(performance.now() - started) })
      } catch (e) {
        process.stderr.write(`hands: afterCall hook failed for ${name}: ${String(e)}\n`)
      }
    }
    return outcome
  }

  async function invoke(info: CallInfo, run: Runner, callOptions: CallOptions): Promise<CallOutcome> {
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
      const result = await run(info.input, callOptions)
      return { ok: true, tool: info.tool, result } as CallOutcome
    } catch (thrown) {
      return { ok: false, tool: info.tool, error: toErrorEnvelope(info.tool, thrown) }
    }
  }

  return {
    tools,
    prompt: renderPrompt({ codeTool: codeToolOf(options.codeTool), isShell }),
    get roots() {
      return current.roots
    },
    get confinement() {
      return confinementOf(current)
    },
    call: call as Session['call'],
    setRoots,
    prepare: () => {
      if (!isShell || closed !== null || current.roots.length === 0) return
      try {
        shellOf(current).prepare()
      } catch {
        // The first shell call starts it again and reports what failed.
      }
    },
    resources: allResources,
    retainedLines: (id) => ownerOf(id).shell?.retainedLines(id) ?? null,
    screen: (id) => ownerOf(id).shell?.screen(id) ?? null,
    attach: (id, watcher) => (closed !== null ? null : (ownerOf(id).shell?.attach(id, watcher) ?? null)),
    onResourcesChanged: (listener) => {
      const l = () => listener()
      listeners.add(l)
      return () => {
        listeners.delete(l)
      }
    },
    close: () => {
      closed ??= Promise.all([...withShells().map((g) => (g.shell as ShellRuntime).close()), ...releasing])
        .then(() => undefined)
        .finally(() => listeners.clear())
      return closed
    },
  }
}

import { parseArgs } from 'node:util'
import type { ConfineMode } from '@hands/shell-runtime'
import { bytesText, SHELL_LIMITS, type ShellLimits } from '@hands/shell-runtime/limits'
import { NO_CODE_TOOL, parseCodeTool } from '../code-tool.ts'
import type { SurfaceOptions } from '../session.ts'

const CONFINE_MODES: readonly ConfineMode[] = ['auto', 'landlock', 'bwrap', 'off']

/** Flags shared by every command that opens a session. */
export const SESSION_FLAGS = {
  root: { type: 'string', multiple: true },
  'no-shell': { type: 'boolean' },
  'run-bound-ms': { type: 'string' },
  'ring-lines': { type: 'string' },
  'stop-grace-ms': { type: 'string' },
  'env-allow': { type: 'string', multiple: true },
  'log-bytes': { type: 'string' },
  'spool-bytes': { type: 'string' },
  'max-shells': { type: 'string' },
  'ring-bytes': { type: 'string' },
  'type-queue-bytes': { type: 'string' },
  confine: { type: 'string' },
  'allow-write': { type: 'string', multiple: true },
  'allow-socket': { type: 'string', multiple: true },
  'deny-read': { type: 'string', multiple: true },
  'no-network': { type: 'boolean' },
  'no-changes': { type: 'boolean' },
  'memory-limit': { type: 'string' },
  'process-limit': { type: 'string' },
  'code-tool': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

const UNITS: Record<string, number> = { '': 1, k: 1024, kib: 1024, m: 1024 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gib: 1024 ** 3 }

const size = (n: number) => bytesText(n, 'flag')

export const SESSION_HELP = `  --root DIR            allowed root (repeatable); the first is the workspace root (default: the directory you run
                        from, unless it is / or your home directory: then none; over MCP the client's roots)
  --no-shell            switch off the five shell tools
  --run-bound-ms N      shell_run safety bound per call (default 120000)
  --ring-lines N        rows of history per background shell, a long line taking several (default 10000)
  --stop-grace-ms N     SIGTERM-to-SIGKILL grace when stopping a tree (default 2000)
  --env-allow NAME      pass this host environment variable to commands (repeatable)
  --log-bytes SIZE      disk per background shell log: the newest half in log_path, the half before in log_path.1 (default ${size(SHELL_LIMITS.logBytes.default)})
  --spool-bytes SIZE    disk for one session's shell_run output files; the oldest are removed first (default ${size(SHELL_LIMITS.spoolBytes.default)})
  --max-shells N        background shells a session holds, running or exited, until shell_stop (default ${SHELL_LIMITS.maxShells.default})
  --ring-bytes SIZE     memory for each background shell's history; fewer rows than --ring-lines when they cost more (default ${size(SHELL_LIMITS.ringBytes.default)})
  --type-queue-bytes SIZE  shell_type input a program has not read yet; more is refused (default ${size(SHELL_LIMITS.typeQueueBytes.default)})
  --confine MODE        how commands are confined to the roots: auto (default), landlock, bwrap, off
  --allow-write DIR     let commands write under DIR too, e.g. a package manager's cache (repeatable)
  --allow-socket PATH   let commands connect to the UNIX socket PATH (or those under the directory PATH) too;
                        sockets under the roots and TMPDIR always, every other host socket never (repeatable)
  --deny-read PATH      hide PATH from commands, beside the usual secret stores (repeatable)
  --no-network          give commands no network: no socket but UNIX ones (Landlock), or a network namespace of their own (bwrap)
  --no-changes          leave out the account of what each command changes on disk (its results then say so)
  --memory-limit SIZE   memory all of a session's commands may use together; past it the OOM killer acts among them (cgroup)
  --process-limit N     processes all of a session's commands may have at once (cgroup)
  --code-tool NAME      the harness's code tool named in descriptions (default python_execution); none for a harness without one
  -h, --help            this help`

/** The flag of each shell limit. */
const LIMIT_FLAGS: Record<string, keyof ShellLimits> = {
  'log-bytes': 'logBytes',
  'spool-bytes': 'spoolBytes',
  'max-shells': 'maxShells',
  'ring-bytes': 'ringBytes',
  'type-queue-bytes': 'typeQueueBytes',
}

/** A usage error: printed with the command's help, exit code 2. */
export class UsageError extends Error {}

/** A positive integer flag's value, or undefined when the flag is absent. */
export function positiveInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`--${flag} takes a positive integer, got ${JSON.stringify(value)}`)
  return Number(value)
}

/** A command's own flags, in `parseArgs` form. */
type Flags = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>

/** What `parse` returns for a command with flags `T`: node:util names this type only through `parseArgs`. */
type Parsed<T extends Flags> = ReturnType<typeof parseArgs<{ args: string[]; options: typeof SESSION_FLAGS & T; allowPositionals: true; strict: true }>>

/** Parse argv for a command: its own flags plus the session flags. */
export function parse<T extends Flags>(argv: string[], extra: T): Parsed<T> {
  try {
    return parseArgs({ args: argv, options: { ...SESSION_FLAGS, ...extra }, allowPositionals: true, strict: true })
  } catch (e) {
    throw new UsageError((e as Error).message)
  }
}

/** A SIZE flag's bytes (`1048576`, `512KiB`, `64M`, `1GiB`), or undefined when the flag is absent. */
function byteSize(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const m = /^(\d+)([a-z]*)$/i.exec(value)
  const unit = m === null ? undefined : UNITS[(m[2] as string).toLowerCase()]
  const bytes = m === null || unit === undefined ? Number.NaN : Number(m[1]) * unit
  if (!Number.isSafeInteger(bytes) || bytes < 1)
    throw new UsageError(`--${flag} takes a positive size in bytes such as 1048576, 512KiB or 64MiB, got ${JSON.stringify(value)}`)
  return bytes
}

/** Session options from parsed session flags. */
export function sessionOptions(values: Record<string, unknown>): SurfaceOptions {
  const options: SurfaceOptions = {}
  // Without --root the session's default applies: the directory hands runs in, unless it is / or home.
  const roots = values['root'] as string[] | undefined
  if (roots?.length) options.roots = roots
  if (values['no-shell'] === true) options.toggles = { shell: false }
  const runBoundMs = positiveInt('run-bound-ms', values['run-bound-ms'] as string | undefined)
  if (runBoundMs !== undefined) options.runBoundMs = runBoundMs
  const ringLines = positiveInt('ring-lines', values['ring-lines'] as string | undefined)
  if (ringLines !== undefined) options.ringLines = ringLines
  const stopGraceMs = positiveInt('stop-grace-ms', values['stop-grace-ms'] as string | undefined)
  if (stopGraceMs !== undefined) options.stopGraceMs = stopGraceMs
  for (const [flag, name] of Object.entries(LIMIT_FLAGS)) {
    const value = name === 'maxShells' ? positiveInt(flag, values[flag] as string | undefined) : byteSize(flag, values[flag] as string | undefined)
    if (value === undefined) continue
    if (value < SHELL_LIMITS[name].min) throw new UsageError(`--${flag} takes at least ${SHELL_LIMITS[name].min}, got ${JSON.stringify(values[flag])}`)
    options[name] = value
  }
  const envAllow = values['env-allow'] as string[] | undefined
  if (envAllow?.length) options.envAllow = envAllow
  const confine = values['confine'] as string | undefined
  if (confine !== undefined) {
    if (!CONFINE_MODES.includes(confine as ConfineMode)) throw new UsageError(`--confine takes ${CONFINE_MODES.join(', ')}, got ${JSON.stringify(confine)}`)
    options.confine = confine as ConfineMode
  }
  const allowWrite = values['allow-write'] as string[] | undefined
  if (allowWrite?.length) options.allowWrite = allowWrite
  const allowSockets = values['allow-socket'] as string[] | undefined
  if (allowSockets?.length) options.allowSockets = allowSockets
  const denyRead = values['deny-read'] as string[] | undefined
  if (denyRead?.length) options.denyRead = denyRead
  if (values['no-network'] === true) options.network = false
  if (values['no-changes'] === true) options.changes = false
  const memoryLimit = byteSize('memory-limit', values['memory-limit'] as string | undefined)
  if (memoryLimit !== undefined) options.memoryLimit = memoryLimit
  const processLimit = positiveInt('process-limit', values['process-limit'] as string | undefined)
  if (processLimit !== undefined) options.processLimit = processLimit
  const codeTool = values['code-tool'] as string | undefined
  if (codeTool !== undefined) {
    if (codeTool.trim() === '') throw new UsageError(`--code-tool takes a tool name, or ${NO_CODE_TOOL} for a harness without one, got ""`)
    options.codeTool = parseCodeTool(codeTool)
  }
  return options
}

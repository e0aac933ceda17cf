import { spawn } from 'node:child_process'
import { realpathSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { isAbsolute, relative, resolve } from 'node:path'
import type { Readable } from 'node:stream'
import type { Changes } from '@hands/contracts'
import type { ConfineKind, ConfineMode } from '../confine/confiner.ts'
import { openHeldDir, releaseCwd } from '../cwd/held-cwd.ts'
import { pickAllowed } from '../env/allowlist.ts'
import { shellQuote } from '../env/capture-login-env.ts'
import { childEnv, NON_INTERACTIVE } from '../env/child-env.ts'
import { endingOf, type Ending } from '../process/signals.ts'
import type { JobProcess, SpawnerStdio } from '../process/spawner.ts'
import { readStatus } from '../process/status.ts'
import { stopTree, waitEmpty, type StopReport } from '../tree/stop-tree.ts'
import { JobHost } from './host.ts'

/** What a sandbox confines its commands to. */
export interface SandboxOptions {
  /** Where commands may write (with their TMPDIR); the first is the working directory by default. At least one. */
  roots: string[]
  /** `false` cuts every protocol (default true). */
  network?: boolean
  /** `auto` (default): Landlock, else bubblewrap, else SandboxUnavailableError; `off` runs unconfined on purpose. */
  confine?: ConfineMode
  /** Further writable directories (a package manager's cache). */
  allowWrite?: string[]
  /** UNIX sockets (or directories of them) commands may connect to besides those under the roots. */
  allowSockets?: string[]
  /** Paths hidden from reads besides the secret stores. */
  denyRead?: string[]
  /** Host variables passed to commands besides the base allowlist (PATH, HOME, LANG, …), by name or `PREFIX_*`. */
  envAllow?: string[]
  /** Record what each command changes on disk (default true). */
  changes?: boolean
  /** Bytes of memory, and processes, the sandbox's commands may use together. */
  memoryLimit?: number
  processLimit?: number
  /** SIGTERM-to-SIGKILL grace when a tree is stopped, in ms (default 2000). */
  graceMs?: number
}

/** How a confined command ended. */
export interface JobEnd {
  /** Exit code; 128+N after a death by signal N. */
  exit: number
  /** The signal's name when bash died by one, else null. */
  signal: string | null
  /** What the command and everything it started changed on disk. */
  changes: Changes
  /** Processes it left running when it ended, stopped with it. */
  leftovers: number
}

/** One confined command, running. */
export interface Job {
  /** The pid of the process spawned (the helper's relay, or bash itself where there is none). */
  readonly pid: number | undefined
  readonly stdout: Readable
  readonly stderr: Readable
  /** Resolves once bash has ended and every process of its tree is gone. */
  readonly done: Promise<JobEnd>
  /** Stop the whole tree now (SIGTERM, grace, SIGKILL); `done` then resolves. */
  stop(): Promise<void>
}

/** Commands confined to roots, each in a process tree of its own. */
export interface Sandbox {
  /** `landlock`, `bwrap` or `off`. */
  readonly kind: ConfineKind
  /** What confines commands here and what it refuses, a line each. */
  readonly summary: string
  /** Start `command` (a bash line, or an argv quoted into one) in `cwd` (default the first root), stdin on /dev/null; resolves once it started. */
  run(command: string | string[], options?: { cwd?: string; env?: Record<string, string> }): Promise<Job>
  /** Stop every command still running and remove the sandbox's files. Idempotent. */
  close(): Promise<void>
}

/** How long the helper's relay may take to end once the tree it reaps is stopped. */
const RELAY_END_MS = 2000
/** How long a stopped job may take to end before its tree is stopped again. */
const RESTOP_MS = 200

/**
 * A sandbox over `roots`. Throws SandboxUnavailableError (from `@hands/sandbox/parts`, its
 * `refusal` saying what is missing and how to fix it) when no mechanism can confine commands
 * here and `confine` is not `off`; a TypeError for a root that is not a directory.
 */
export function createSandbox(options: SandboxOptions): Sandbox {
  if (!Array.isArray(options.roots) || options.roots.length === 0) throw new TypeError('roots must name at least one directory')
  const roots = options.roots.map((r) => {
    try {
      return realpathSync.native(resolve(r))
    } catch {
      throw new TypeError(`root ${r} does not exist`)
    }
  })
  const host = new JobHost({
    roots,
    confine: options.confine ?? 'auto',
    tree: 'auto',
    spoolParent: tmpdir(),
    hostEnv: process.env,
    allowWrite: options.allowWrite ?? [],
    allowSockets: options.allowSockets ?? [],
    denyRead: options.denyRead ?? [],
    privateDirs: [],
    isNetwork: options.network ?? true,
    isChanges: options.changes ?? true,
    isSpawner: true,
    ...(options.memoryLimit === undefined ? {} : { memoryLimit: options.memoryLimit }),
    ...(options.processLimit === undefined ? {} : { processLimit: options.processLimit }),
  })
  const graceMs = options.graceMs ?? 2000
  const base = pickAllowed(process.env, options.envAllow ?? [])
  const running = new Set<Job>()
  let closed: Promise<void> | null = null

  const run = async (command: string | string[], runOptions: { cwd?: string; env?: Record<string, string> } = {}): Promise<Job> => {
    if (closed !== null) throw new Error('the sandbox is closed')
    const line = typeof command === 'string' ? command : command.map(shellQuote).join(' ')
    const cwd = holdInside(host.roots, runOptions.cwd)
    const seq = host.nextSeq()
    const tree = host.keeper.create()
    const { launch } = host.launch(tree, line, cwd, seq, 'pipes')
    const env = { ...childEnv(base, NON_INTERACTIVE, runOptions.env ?? {}), ...tree.env, ...launch.env }
    const stdio: SpawnerStdio[] = ['ignore', 'pipe', 'pipe']
    if (launch.statusFd !== null) stdio.push('ignore', 'pipe')
    // A job whose relay reports its end is forked by the small spawner process, not by this
    // (larger) Node process, which costs less; Node's spawn starts it when there is none.
    const spawner = host.spawner(launch)
    let child: JobProcess
    try {
      child =
        (spawner === null ? null : await spawner.start(launch, env, stdio)) ??
        spawn(launch.file, launch.args, { cwd: launch.cwd, env, stdio, detached: true, ...(launch.argv0 === undefined ? {} : { argv0: launch.argv0 }) })
    } finally {
      releaseCwd(cwd)
    }
    if (launch.hasRelay && child.pid !== undefined) tree.setRelay(child.pid)
    let isExited = false
    const exitedOnce = new Promise<void>((r) => child.once('exit', () => r()))
    child.once('exit', () => {
      isExited = true
    })
    const ended = new Promise<Ending | Error>((resolveEnd) => {
      child.once('error', (e) => resolveEnd(e))
      // Both null: a job whose spawner died ended unseen; its relay's report (if any) came first.
      child.once('exit', (code, signal) =>
        resolveEnd(code === null && signal === null ? new Error('the job ended unseen: its spawner died') : endingOf(code, signal)),
      )
      if (launch.statusFd !== null) void readStatus(child.stdio[launch.statusFd] as Readable).then((e) => e !== null && resolveEnd(e))
    })
    const root = { pid: child.pid, isExited: () => isExited }
    let stopping: Promise<StopReport> | null = null
    const changes = host.jobChanges(seq)
    const done = (async (): Promise<JobEnd> => {
      const end = await ended
      if (end instanceof Error) {
        changes.dispose()
        tree.dispose()
        throw end
      }
      if (host.confiner.settleMs > 0) await waitEmpty(tree, host.confiner.settleMs)
      const isStopped = stopping !== null
      const report = await (stopping ?? stopTree(tree, graceMs))
      if (launch.statusFd !== null && !isExited) {
        const timer = setTimeout(() => child.kill('SIGKILL'), RELAY_END_MS)
        await exitedOnce
        clearTimeout(timer)
      }
      tree.dispose()
      const account = changes.total()
      changes.dispose()
      host.settled()
      return { exit: end.exit, signal: end.signal, changes: account, leftovers: isStopped ? 0 : report.foundCount }
    })()
    const job: Job = {
      pid: child.pid,
      stdout: child.stdio[1] as Readable,
      stderr: child.stdio[2] as Readable,
      done,
      stop: async () => {
        stopping ??= (async () => {
          let report = await stopTree(tree, graceMs, root)
          // A job stopped while it is still starting can have nothing in its tree yet, and a
          // process can join it after the stop looked: stop again until bash has ended.
          while (!(await Promise.race([ended.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), RESTOP_MS))]))) {
            report = await stopTree(tree, graceMs, root)
          }
          return report
        })()
        await done.catch(() => undefined)
      },
    }
    running.add(job)
    void done.finally(() => running.delete(job)).catch(() => undefined)
    return job
  }

  return {
    kind: host.confiner.kind,
    summary: host.summary(),
    run,
    close: () => {
      closed ??= (async () => {
        host.closing()
        await Promise.allSettled([...running].map((j) => j.stop()))
        host.close()
      })()
      return closed
    },
  }
}

/** `cwd` (default the first root; relative to it) held open, when it is a directory under a root. */
function holdInside(roots: string[], cwd: string | undefined) {
  const given = cwd === undefined ? (roots[0] as string) : resolve(roots[0] as string, cwd)
  const held = openHeldDir(given)
  if (held === 'missing') throw new TypeError(`cwd ${given} is not a directory`)
  const real = held === 'no-proc' ? realpathSync.native(given) : held.real
  const inside = roots.some((r) => {
    const rel = relative(r, real)
    return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))
  })
  if (!inside) {
    if (held !== 'no-proc') releaseCwd(held)
    throw new TypeError(`cwd ${given} is not under a root (${roots.join(', ')})`)
  }
  if (held !== 'no-proc') return held
  const st = statSync(real)
  return { real, fd: null, dev: st.dev, ino: st.ino }
}

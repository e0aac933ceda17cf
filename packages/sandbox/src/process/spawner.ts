import { spawn, type ChildProcess } from 'node:child_process'
import { EventEmitter } from 'node:events'
import { readFileSync } from 'node:fs'
import type { Socket } from 'node:net'
import { Readable, type Writable } from 'node:stream'
import type { Launch } from '../confine/confiner.ts'
import { signalName } from './signals.ts'

/**
 * What runPiped needs of a started job, whichever way it started: Node's ChildProcess, or a
 * {@link SpawnedJob} the session's spawner started.
 */
export interface JobProcess {
  readonly pid?: number | undefined
  readonly stdio: ReadonlyArray<Readable | Writable | null | undefined>
  readonly exitCode: number | null
  readonly signalCode: NodeJS.Signals | null
  kill(signal?: NodeJS.Signals): boolean
  once(event: 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): this
  once(event: 'error', listener: (err: Error) => void): this
}

/** How each of a job's descriptors starts: on /dev/null, or on a socket whose other end Node reads. */
export type SpawnerStdio = 'ignore' | 'pipe'

/** The largest request the spawner takes (native/spawner.c FRAME_MAX); a larger job goes to Node's spawn. */
const FRAME_MAX = 1 << 20
/** The most descriptors one job may get from the spawner (native/spawner.c FDS_MAX). */
const FDS_MAX = 8
/** How long the spawner may take to say it is ready before it counts as broken (it is killed; jobs start through Node). */
const READY_MS = 5000
/**
 * How long after the job's pid its descriptors may still be on their way. Node drops a descriptor
 * it cannot take (it is out of descriptors itself): the job then runs with that output going
 * nowhere rather than hang its call.
 */
const HANDLES_MS = 2000
/** How often a job whose spawner died is looked at until it is gone (its end is no longer reported). */
const ORPHAN_POLL_MS = 25

/** A job the spawner started; the spawner is its parent and reaps it only once Node has seen it end. */
export class SpawnedJob extends EventEmitter implements JobProcess {
  exitCode: number | null = null
  signalCode: NodeJS.Signals | null = null
  #isEnded = false

  constructor(
    readonly pid: number,
    readonly stdio: ReadonlyArray<Readable | null>,
  ) {
    super()
  }

  /** Signal the job's first process; its pid is still the job's until the spawner reaps it, which it does only after end(). */
  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.#isEnded) return false
    try {
      process.kill(this.pid, signal)
      return true
    } catch {
      return false
    }
  }

  /** The job's first process ended (code, or the number of the signal that killed it; both null when unknown). */
  end(code: number | null, signal: number | null): void {
    if (this.#isEnded) return
    this.#isEnded = true
    this.exitCode = signal === null ? code : null
    this.signalCode = signal === null ? null : (signalName(signal) as NodeJS.Signals)
    // Later than any listener the starter attaches once its start resolves.
    setImmediate(() => this.emit('exit', this.exitCode, this.signalCode))
  }
}

interface Pending {
  fds: Array<Readable | null>
  stdio: SpawnerStdio[]
  missing: number
  pid: number | null
  /** The job's end, when it came before the job was handed out. */
  ended: [number | null, number | null] | null
  resolve: (job: SpawnedJob | null) => void
}

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4)
  b.writeUInt32LE(n)
  return b
}
const frame = (body: Buffer): Buffer => Buffer.concat([u32(body.length), body])
const cString = (s: string): Buffer => Buffer.from(`${s}\0`)

/** The state and start time (clock ticks after boot) of process `pid`, or null when there is none. */
function stateOf(pid: number): { state: string; start: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return { state: fields[0] ?? '', start: fields[19] ?? '' }
  } catch {
    return null
  }
}

/**
 * A session's starter of piped jobs: `hands-confine --spawner`, a small process that forks and
 * execs each job Node asks for, so starting a job does not fork the server (whose page tables
 * make a fork cost 1.4–2.2 ms of CPU). It hands the job's socket ends back over Node's own IPC
 * channel. See native/spawner.c for the protocol.
 *
 * Every start that the spawner cannot do (not ready, dead, a request it cannot carry, an error
 * from the fork or exec) returns null, and the caller starts the job with Node's spawn as before:
 * no command fails because of the spawner.
 */
export class Spawner {
  readonly #child: ChildProcess
  readonly #pending = new Map<number, Pending>()
  readonly #jobs = new Map<number, SpawnedJob>()
  readonly #ready: Promise<boolean>
  #isAlive = false
  #isDead = false
  #nextId = 1

  constructor(helper: string) {
    // No environment: nothing of the server's is in a process a job could look at.
    this.#child = spawn(helper, ['--spawner', '3'], { stdio: ['pipe', 'ignore', 'ignore', 'ipc'], env: {} })
    let onReady: (ok: boolean) => void = () => undefined
    this.#ready = new Promise<boolean>((resolve) => {
      onReady = resolve
    })
    const timer = setTimeout(() => this.close(), READY_MS)
    timer.unref()
    this.#child.on('message', (message: Record<string, number>, handle?: Socket) => {
      if (message['ready'] === 1) {
        clearTimeout(timer)
        this.#isAlive = true
        onReady(true)
        this.#idle()
      } else this.#onMessage(message, handle)
    })
    const died = () => {
      clearTimeout(timer)
      onReady(false)
      this.#died()
    }
    this.#child.once('error', died)
    this.#child.once('exit', died)
    this.#child.once('disconnect', died)
    this.#child.stdin?.on('error', () => undefined)
  }

  /** True when the spawner answers requests. */
  get isAlive(): boolean {
    return this.#isAlive && !this.#isDead
  }

  /** True once the spawner is gone (or never started): it starts no more jobs. */
  get isDead(): boolean {
    return this.#isDead
  }

  /**
   * Start `launch` with `env` and descriptors 0..n-1 as `stdio` says, in a new session, or return
   * null when the spawner cannot (the caller then spawns it itself).
   */
  async start(launch: Launch, env: Record<string, string>, stdio: SpawnerStdio[]): Promise<SpawnedJob | null> {
    if (this.#isDead || !(await this.#ready) || this.#isDead) return null
    const request = this.#request(launch, env, stdio)
    if (request === null) return null
    const id = this.#nextId++
    const job = new Promise<SpawnedJob | null>((resolve) => {
      const fds = stdio.map(() => null)
      this.#pending.set(id, { fds, stdio, missing: stdio.filter((s) => s === 'pipe').length, pid: null, ended: null, resolve })
    })
    this.#busy()
    this.#child.stdin?.write(Buffer.concat([u32(request.length + 5), Buffer.from('S'), u32(id), request]))
    return job
  }

  /** The request's body after its id: NFDS KIND[NFDS] ARGC ENVC FILE CWD ARG... ENV...; null when the spawner cannot carry it. */
  #request(launch: Launch, env: Record<string, string>, stdio: SpawnerStdio[]): Buffer | null {
    if (!launch.file.startsWith('/') || stdio.length > FDS_MAX) return null
    // The held directory as the spawner can open it: through this process's descriptor table.
    const cwd = launch.cwd.replace(/^\/proc\/self\/fd\//, `/proc/${process.pid}/fd/`)
    const argv = [launch.argv0 ?? launch.file, ...launch.args]
    const vars = Object.entries(env).map(([k, v]) => `${k}=${v}`)
    const strings = [launch.file, cwd, ...argv, ...vars]
    // Node's spawn refuses these with its own error; let it.
    if (strings.some((s) => s.includes('\0'))) return null
    const body = Buffer.concat([
      u32(stdio.length),
      Buffer.from(stdio.map((s) => (s === 'pipe' ? 2 : 1))),
      u32(argv.length),
      u32(vars.length),
      ...strings.map(cString),
    ])
    return body.length + 9 > FRAME_MAX ? null : body
  }

  #onMessage(message: Record<string, number>, handle: Socket | undefined): void {
    const id = message['id']
    const p = id === undefined ? undefined : this.#pending.get(id)
    if (id === undefined || p === undefined) {
      handle?.destroy()
      if (message['exit'] !== undefined) this.#ended(message['exit'], message['code'] ?? null, message['signal'] ?? null)
      return
    }
    const fd = message['fd']
    if (fd !== undefined && handle !== undefined && p.fds[fd] === null) {
      p.fds[fd] = handle
      p.missing--
    } else if (message['errno'] !== undefined) {
      this.#settle(id, p, false)
      return
    } else if (message['pid'] !== undefined) {
      p.pid = message['pid']
      if (p.missing > 0) setTimeout(() => this.#withoutMissing(id, p), HANDLES_MS)
    }
    if (p.pid !== null && p.missing === 0) this.#settle(id, p, true)
  }

  /** Start job `id` with the descriptors Node dropped (it was out of them) reading as ended. */
  #withoutMissing(id: number, p: Pending): void {
    if (this.#pending.get(id) !== p) return
    for (const [k, s] of p.fds.entries()) if (s === null && p.stdio[k] === 'pipe') p.fds[k] = Readable.from([])
    this.#settle(id, p, true)
  }

  /** The first process `pid` of a job ended; once its job knows, the spawner may reap it (only then is the pid free again). */
  #ended(pid: number, code: number | null, signal: number | null): void {
    const job = this.#jobs.get(pid)
    if (job === undefined) {
      // Still being handed out (its descriptors are late): it ends once it is.
      for (const p of this.#pending.values()) if (p.pid === pid) p.ended = [code, signal]
      return
    }
    this.#jobs.delete(pid)
    job.end(code, signal)
    this.#child.stdin?.write(frame(Buffer.concat([Buffer.from('R'), u32(pid)])))
    this.#idle()
  }

  #settle(id: number, p: Pending, ok: boolean): void {
    this.#pending.delete(id)
    if (!ok || p.pid === null) {
      for (const s of p.fds) s?.destroy()
      p.resolve(null)
    } else {
      const job = new SpawnedJob(p.pid, p.fds)
      this.#jobs.set(p.pid, job)
      p.resolve(job)
      if (p.ended !== null) this.#ended(p.pid, ...p.ended)
    }
    this.#idle()
  }

  /** Keep the event loop alive while the spawner starts, a job is being started or runs; not otherwise. */
  #busy(): void {
    this.#child.channel?.ref()
  }

  #idle(): void {
    if (this.#pending.size === 0 && this.#jobs.size === 0) {
      this.#child.channel?.unref()
      this.#child.unref()
      ;(this.#child.stdin as Socket | null)?.unref?.()
    } else this.#child.channel?.ref()
  }

  /**
   * The spawner is gone. Requests in flight without a job yet start with Node's spawn instead; a
   * job it started goes on (the kernel gives it a new parent), and its end is seen when it is gone, by polling,
   * since no one reports it any more.
   */
  #died(): void {
    if (this.#isDead) return
    this.#isDead = true
    // A job whose pid came is running: it is handed out with what descriptors it has. One that was
    // forked but not reported yet never runs (it waits for the spawner's go, written only after its
    // pid), so Node's spawn starting it instead runs it once.
    for (const [id, p] of this.#pending) {
      if (p.pid === null) this.#settle(id, p, false)
      else this.#withoutMissing(id, p)
    }
    for (const [pid, job] of this.#jobs) {
      const start = stateOf(pid)?.start
      const timer = setInterval(() => {
        const now = stateOf(pid)
        if (now !== null && now.state !== 'Z' && now.start === start) return
        clearInterval(timer)
        job.end(null, null)
      }, ORPHAN_POLL_MS)
    }
    this.#jobs.clear()
  }

  /** Stop the spawner (the session closed; its jobs are already stopped). */
  close(): void {
    this.#child.stdin?.destroy()
    if (!this.#isDead) this.#child.kill('SIGKILL')
  }
}

/** A session's hold on the process's spawner (see holdSpawner). */
export interface SpawnerHold {
  readonly spawner: Spawner
  /** The session is done with it (its jobs are stopped); the last hold released stops it. Idempotent. */
  release(): void
}

/** The spawner the sessions of this process share, and how many hold it; null when none runs. */
let shared: { spawner: Spawner; holds: number } | null = null

/**
 * Hold the process's spawner, started from `helper` when none runs (or the one that ran died).
 * Every session of a server shares one: a request carries all of a job (program, arguments,
 * environment, directory, descriptors; the helper it runs joins the job's cgroup and confines
 * it), and the spawner keeps nothing of a session's between requests. So only the first session
 * of a server pays for the spawner's start (a fork of the server), not each one. A session whose
 * spawner died goes on without one (Node's spawn); one that holds it later starts a new one.
 */
export function holdSpawner(helper: string): SpawnerHold {
  if (shared === null || shared.spawner.isDead) shared = { spawner: new Spawner(helper), holds: 0 }
  const held = shared
  held.holds++
  let isReleased = false
  return {
    spawner: held.spawner,
    release: () => {
      if (isReleased) return
      isReleased = true
      if (--held.holds > 0) return
      held.spawner.close()
      if (shared === held) shared = null
    },
  }
}

import { spawn } from 'node:child_process'
import type { Readable } from 'node:stream'
import {
  type Launch,
  type JobTree,
  stopTree,
  waitEmpty,
  type StopReport,
  endingOf,
  onceClosed,
  readStatus,
  type Ending,
  PIPESTATUS_PIPE_FD,
  PIPESTATUS_VAR,
  type JobProcess,
  type Spawner,
  type SpawnerStdio,
} from '@hands/sandbox/parts'
import { BoundedCapture, type CapturedStream } from '../output/bounded-capture.ts'
import type { SpoolBudget } from '../output/spool-budget.ts'

/** How to run one bash line with pipes. */
export interface PipedSpec {
  /** The spawn of the job (bash -c LINE through the confinement mechanism). */
  launch: Launch
  /** The command's environment; the tree's and the mechanism's variables go on top. */
  env: Record<string, string>
  tree: JobTree
  headBytes: number
  tailBytes: number
  /** Where the whole streams go once they outgrow head + tail: `<spoolBase>.stdout` / `.stderr`. */
  spoolBase: string
  /** The session's budget the spool files are admitted by. */
  budget: SpoolBudget
  /** `performance.now()` by which the command must have ended; its tree is stopped then. */
  deadline: number
  graceMs: number
  /** How long the mechanism's own processes may outlive bash before what is left counts as leftovers, in ms. */
  settleMs: number
  /** Record the last pipeline's stage statuses (the prelude reports them on a pipe at fd 3). */
  isPipestatus: boolean
  /** Clean the kept text for reading (see cleanText); false keeps it as decoded (machine-read output). */
  isCleaning: boolean
  /** Aborting stops the command's tree (SIGTERM, grace, SIGKILL); the command then reports how it ended. */
  signal?: AbortSignal
  /**
   * The session's spawner, which starts a job whose end the helper's relay reports without
   * forking the server; Node's spawn starts it when there is none or it cannot.
   */
  spawner?: Spawner | null
}

/** How one bash line ran. */
export interface PipedRun {
  /** How bash ended; null when the bound stopped it. */
  ending: Ending | null
  timedOut: boolean
  stdout: CapturedStream
  stderr: CapturedStream
  /** The processes still in the tree when bash ended, and how they were stopped; null when none. */
  leftovers: StopReport | null
  /** What stopping the tree at the bound found; null when the bound did not fire. */
  boundStop: StopReport | null
  /** True when the caller aborted the command (the session closed) and its tree was stopped. */
  aborted: boolean
  /** Stage statuses of the last pipeline when it had more than one stage; else null. */
  pipestatus: number[] | null
  durationMs: number
}

/** Raised when the operating system could not start bash. */
export class SpawnError extends Error {
  override readonly name = 'SpawnError'
}

/** How long to wait for the pipes to close once the whole tree is gone. */
const PIPE_CLOSE_MS = 2000
/** How long the helper's relay may take to end once the tree it reaps is stopped. */
const RELAY_END_MS = 2000

/** Wait for the relay to end (it does once the tree is gone); SIGKILL it after RELAY_END_MS. */
async function relayEnded(child: JobProcess, isExited: () => boolean): Promise<void> {
  if (isExited()) return
  const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  let timer: NodeJS.Timeout | undefined
  const inTime = await Promise.race([ended.then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), RELAY_END_MS)))])
  clearTimeout(timer)
  if (inTime) return
  child.kill('SIGKILL')
  await ended
}

/** What the pipestatus pipe may hold: the stage statuses of one pipeline fit many times over. */
const PIPESTATUS_BYTES = 4096

/** Keep the first `max` bytes of a small stream until it ends (the rest is read and dropped: the stream is the job's to write). */
function collect(stream: Readable, into: Buffer[], max: number): Promise<void> {
  let kept = 0
  return new Promise((resolve) => {
    stream.on('data', (chunk: Buffer) => {
      if (kept >= max) return
      into.push(chunk.subarray(0, max - kept))
      kept += Math.min(chunk.length, max - kept)
    })
    onceClosed(stream, resolve)
  })
}

function capture(stream: Readable, into: BoundedCapture): Promise<void> {
  return new Promise((resolve) => {
    stream.on('data', (chunk: Buffer) => {
      if (!into.push(chunk)) {
        stream.pause()
        void into.drained().then(() => stream.resume())
      }
    })
    onceClosed(stream, resolve)
  })
}

/**
 * Run one bash line with stdin on /dev/null and both outputs on pipes, in its own session and
 * job tree. It waits for bash to EXIT (never for the pipes: a leftover descendant may hold them),
 * then stops whatever the line left running, then reads the pipes to their end, so no byte is
 * lost and the call cannot hang on a `&` child.
 */
export async function runPiped(spec: PipedSpec): Promise<PipedRun> {
  const started = performance.now()
  const { launch } = spec
  const env: Record<string, string> = { ...spec.env, ...spec.tree.env, ...launch.env }
  if (spec.isPipestatus) env[PIPESTATUS_VAR] = String(PIPESTATUS_PIPE_FD)
  const stdio: SpawnerStdio[] = ['ignore', 'pipe', 'pipe']
  if (spec.isPipestatus || launch.statusFd !== null) stdio.push(spec.isPipestatus ? 'pipe' : 'ignore')
  if (launch.statusFd !== null) stdio.push('pipe')
  // The spawner starts only jobs whose relay reports their end: should the spawner die, the
  // report still comes.
  const fromSpawner = spec.spawner && launch.statusFd !== null ? await spec.spawner.start(launch, env, stdio) : null
  const child: JobProcess =
    fromSpawner ??
    spawn(launch.file, launch.args, {
      cwd: launch.cwd,
      env,
      stdio,
      detached: true,
      ...(launch.argv0 === undefined ? {} : { argv0: launch.argv0 }),
    })
  let isExited = false
  child.once('exit', () => {
    isExited = true
  })
  // The helper's relay is the spawned process; what it runs is the job.
  if (launch.hasRelay && child.pid !== undefined) spec.tree.setRelay(child.pid)
  const psChunks: Buffer[] = []
  const psDone = spec.isPipestatus ? collect(child.stdio[PIPESTATUS_PIPE_FD] as Readable, psChunks, PIPESTATUS_BYTES) : Promise.resolve()
  const reported = launch.statusFd === null ? null : readStatus(child.stdio[launch.statusFd] as Readable)
  const out = new BoundedCapture(spec.headBytes, spec.tailBytes, `${spec.spoolBase}.stdout`, spec.isCleaning, spec.budget)
  const err = new BoundedCapture(spec.headBytes, spec.tailBytes, `${spec.spoolBase}.stderr`, spec.isCleaning, spec.budget)
  const outDone = capture(child.stdio[1] as Readable, out)
  const errDone = capture(child.stdio[2] as Readable, err)

  let timer: NodeJS.Timeout | undefined
  // The relay reports the job's end at once and may stay to reap what the job left; without it,
  // the spawned process is the job.
  const exited = new Promise<Ending | Error | null>((resolve) => {
    child.once('error', (e) => resolve(e))
    // Both null: a job whose spawner died ended unseen; its relay's report (if any) came first.
    child.once('exit', (code, signal) => resolve(code === null && signal === null ? null : endingOf(code, signal)))
    void reported?.then((ending) => {
      if (ending !== null) resolve(ending)
    })
  })
  const bound = new Promise<'bound'>((resolve) => {
    timer = setTimeout(() => resolve('bound'), Math.max(0, spec.deadline - performance.now()))
  })

  const root = { pid: child.pid, isExited: () => isExited }
  let abortStop: Promise<StopReport> | null = null
  const onAbort = () => {
    abortStop ??= stopTree(spec.tree, spec.graceMs, root)
  }
  if (spec.signal?.aborted) onAbort()
  else spec.signal?.addEventListener('abort', onAbort, { once: true })

  let first = await Promise.race([exited, bound])
  clearTimeout(timer)
  if (first instanceof Error) {
    for (const s of child.stdio) s?.destroy()
    throw new SpawnError(first.message, { cause: first })
  }
  let boundStop: StopReport | null = null
  let ending: Ending | null = null
  if (first === 'bound') {
    boundStop = await stopTree(spec.tree, spec.graceMs, root)
    const late = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), spec.graceMs + 5000))])
    if (late === null) {
      // bash did not die with its tree (it left the tree?); kill it by its own pid, which is still ours.
      child.kill('SIGKILL')
      await exited
    }
  } else {
    ending = first
  }
  first = first as Ending | null | 'bound'

  spec.signal?.removeEventListener('abort', onAbort)
  let leftovers: StopReport | null = null
  if (abortStop !== null) await abortStop
  else if (first !== 'bound') {
    if (spec.settleMs > 0) await waitEmpty(spec.tree, spec.settleMs)
    const report = await stopTree(spec.tree, spec.graceMs)
    if (report.foundCount > 0) leftovers = report
  }
  if (launch.statusFd !== null) await relayEnded(child, () => isExited)
  // Every writer is gone, so the pipes close; a process that escaped the tree must not hang us.
  let pipeTimer: NodeJS.Timeout | undefined
  const closed = await Promise.race([
    Promise.all([outDone, errDone, psDone]).then(() => true),
    new Promise<false>((r) => {
      pipeTimer = setTimeout(() => r(false), PIPE_CLOSE_MS)
    }),
  ])
  clearTimeout(pipeTimer)
  if (!closed) for (const s of child.stdio) s?.destroy()
  spec.tree.dispose()
  const [stdout, stderr] = await Promise.all([out.finish(), err.finish()])
  // Empty when no pipeline with more than one stage ran last.
  const stages = Buffer.concat(psChunks).toString('latin1').trim()
  const pipestatus = /^\d+( \d+)+$/.test(stages) ? stages.split(' ').map(Number) : null
  return {
    ending,
    timedOut: first === 'bound',
    stdout,
    stderr,
    leftovers,
    boundStop,
    aborted: abortStop !== null,
    pipestatus,
    durationMs: Math.round(performance.now() - started),
  }
}

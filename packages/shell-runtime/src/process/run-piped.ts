import { spawn } from 'node:child_process'
import type { Readable } from 'node:stream'
import type { Launch } from '../confine/confiner.ts'
import { BoundedCapture, type CapturedStream } from '../output/bounded-capture.ts'
import type { SpoolBudget } from '../output/spool-budget.ts'
import type { JobTree } from '../tree/job-tree.ts'
import { stopTree, waitEmpty, type StopReport } from '../tree/stop-tree.ts'
import { endingOf, type Ending } from './signals.ts'
import { PIPESTATUS_VAR } from './prelude.ts'

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

/** Keep every chunk of a small stream until it ends. */
function collect(stream: Readable, into: Buffer[]): Promise<void> {
  return new Promise((resolve) => {
    stream.on('data', (chunk: Buffer) => into.push(chunk))
    stream.once('close', resolve)
    stream.once('error', () => resolve())
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
    stream.once('close', resolve)
    stream.once('error', () => resolve())
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
  if (spec.isPipestatus) env[PIPESTATUS_VAR] = '3'
  const child = spawn(launch.file, launch.args, {
    cwd: launch.cwd,
    env,
    stdio: spec.isPipestatus ? ['ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'],
    detached: true,
    ...(launch.argv0 === undefined ? {} : { argv0: launch.argv0 }),
  })
  const psChunks: Buffer[] = []
  const psDone = spec.isPipestatus ? collect(child.stdio[3] as Readable, psChunks) : Promise.resolve()
  const out = new BoundedCapture(spec.headBytes, spec.tailBytes, `${spec.spoolBase}.stdout`, spec.isCleaning, spec.budget)
  const err = new BoundedCapture(spec.headBytes, spec.tailBytes, `${spec.spoolBase}.stderr`, spec.isCleaning, spec.budget)
  const outDone = capture(child.stdout as Readable, out)
  const errDone = capture(child.stderr as Readable, err)

  let timer: NodeJS.Timeout | undefined
  const exited = new Promise<Ending | Error>((resolve) => {
    child.once('error', (e) => resolve(e))
    child.once('exit', (code, signal) => resolve(endingOf(code, signal)))
  })
  const bound = new Promise<'bound'>((resolve) => {
    timer = setTimeout(() => resolve('bound'), Math.max(0, spec.deadline - performance.now()))
  })

  const root = { pid: child.pid, isExited: () => child.exitCode !== null || child.signalCode !== null }
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
  first = first as Ending | 'bound'

  spec.signal?.removeEventListener('abort', onAbort)
  let leftovers: StopReport | null = null
  if (abortStop !== null) await abortStop
  else if (first !== 'bound') {
    if (spec.settleMs > 0) await waitEmpty(spec.tree, spec.settleMs)
    const report = await stopTree(spec.tree, spec.graceMs)
    if (report.foundCount > 0) leftovers = report
  }
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

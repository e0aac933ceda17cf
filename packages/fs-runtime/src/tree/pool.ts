import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { closeRef, copyChunk, unlinkChunk, WORKER_URL, type CopyChunk, type CopyDone, type DirRef, type UnlinkChunk, type UnlinkDone } from '../sync/api.ts'

/**
 * Tree work in chunks, run off the event loop where it can be. A chunk (up to CHUNK entries of
 * one directory) is a synchronous run of file system calls (sync/chunks.js): one Node call per system
 * call, no promise or thread-pool round trip per entry. Small trees are done on the main thread
 * in slices of SLICE_MS with a yield to the event loop between them; once a walk outlasts
 * ENGAGE_MS, worker threads (one per core, at most MAX_WORKERS) start and take the chunks, and
 * the main thread only walks directories (open, list, mkdir, rmdir) and hands chunks out.
 * The workers stay for IDLE_MS after their last chunk and never keep the process alive while
 * idle.
 */

/** Entries per chunk. */
export const CHUNK = 64
/** Main-thread work between two yields to the event loop. */
const SLICE_MS = 2
/** Chunks run on the main thread before the workers are asked (configurePool). */
let sliceMs = SLICE_MS
/** A walk still going after this long asks for the workers (they take ~30 ms to start). */
const ENGAGE_MS = 5
/** A walk that may hand over (remove.ts) does so when still going after this long: a helper starts in ~2 ms. */
const HAND_OVER_MS = 2
/** HAND_OVER_MS, or as configurePool set it. */
let handOverMs = HAND_OVER_MS
/**
 * The native helper (native.ts): a copy of at least `copyMin` entries goes to it, with at most
 * `max` helper processes on one tree (and never more than the cores); configurePool changes both.
 */
export const treeHelpers = { copyMin: 256, max: 4 }
/** Workers are stopped after this long without work. */
const IDLE_MS = 10_000
/** Chunks posted to one worker at once, so it never waits on the main thread between two. */
const DEPTH = 2
const MAX_WORKERS = 4

type Task =
  | { op: 'copy'; chunk: CopyChunk; abort: SharedArrayBuffer; done: (r: CopyDone) => void; failed: (e: unknown) => void }
  | { op: 'unlink'; chunk: UnlinkChunk; abort: SharedArrayBuffer; done: (r: UnlinkDone) => void; failed: (e: unknown) => void }

interface Member {
  worker: Worker
  isOnline: boolean
  /** True once it answered a chunk: a worker that fails before that cannot run here at all. */
  hasAnswered: boolean
  tasks: Map<number, Task>
}

const queue: Task[] = []
const crew: Member[] = []
let nextId = 0
let isPumpDue = false
let idleTimer: NodeJS.Timeout | null = null
/** Worker threads to start; 0 once one could not run (everything then runs on the main thread). */
let crewSize = availableParallelism() > 1 ? Math.min(availableParallelism(), MAX_WORKERS) : 0

/** Stop every worker that has nothing to do now. */
function dismissIdle(): void {
  for (const m of [...crew]) {
    if (m.tasks.size > 0) continue
    crew.splice(crew.indexOf(m), 1)
    m.worker.removeAllListeners('exit')
    void m.worker.terminate()
  }
}

/**
 * Change how the pool works (tests and benchmarks): `workers` threads at most (0: everything on
 * the main thread; idle workers stop at once), `sliceMs` of main-thread work before the workers
 * are asked (0: none, every chunk goes to a worker), `handOverMs` of walking before a walk that
 * may hand over does (0: at once), `copyByHelperMin` entries of a tree for its copy to go to the
 * native helper (0: every tree), `helpers` processes at most on one tree.
 */
export function configurePool(options: { workers?: number; sliceMs?: number; handOverMs?: number; copyByHelperMin?: number; helpers?: number }): void {
  if (options.handOverMs !== undefined) handOverMs = options.handOverMs
  if (options.copyByHelperMin !== undefined) treeHelpers.copyMin = options.copyByHelperMin
  if (options.helpers !== undefined) treeHelpers.max = options.helpers
  if (options.workers !== undefined) {
    crewSize = options.workers
    dismissIdle()
  }
  if (options.sliceMs !== undefined) sliceMs = options.sliceMs
}

/** Chunks run so far on the main thread and on worker threads, and native helpers started (tests check which did the work). */
export const chunkCounts = { here: 0, workers: 0, helpers: 0 }

function runHere(task: Task): void {
  chunkCounts.here++
  const abort = new Int32Array(task.abort)
  try {
    if (task.op === 'copy') task.done(copyChunk(task.chunk, abort))
    else task.done(unlinkChunk(task.chunk, abort))
  } catch (cause) {
    task.failed(cause)
  }
}

/** A worker's error, as the errno-style error the same call raises on the main thread. */
function rebuilt(error: { message: string; code?: string; syscall?: string; path?: string }): Error {
  return Object.assign(new Error(error.message), error)
}

/**
 * A worker failed or stopped. Its chunks fail with `why` — unless it never answered one (it
 * could not even load): then no worker can run here, its chunks have not run, and they and
 * everything after run on the main thread.
 */
function leave(member: Member, why: Error): void {
  const at = crew.indexOf(member)
  if (at < 0) return
  crew.splice(at, 1)
  member.worker.removeAllListeners('exit')
  void member.worker.terminate()
  if (!member.hasAnswered) {
    crewSize = 0
    queue.unshift(...member.tasks.values())
  } else for (const task of member.tasks.values()) task.failed(why)
  member.tasks.clear()
  schedulePump()
}

function startCrew(): void {
  if (crew.length > 0) return
  try {
    for (let i = 0; i < crewSize; i++) {
      // No execArgv: a loader the host runs under (tsx, a test runner) has no business here.
      const worker = new Worker(WORKER_URL, { execArgv: [], name: 'hands-fs' })
      const member: Member = { worker, isOnline: false, hasAnswered: false, tasks: new Map() }
      worker.unref()
      worker.on('online', () => {
        member.isOnline = true
        schedulePump()
      })
      worker.on('message', (m: { id: number; done?: CopyDone & UnlinkDone; error?: { message: string } }) => {
        member.hasAnswered = true
        const task = member.tasks.get(m.id)
        member.tasks.delete(m.id)
        // A worker with chunks in flight keeps the process alive, an idle one never.
        if (member.tasks.size === 0) member.worker.unref()
        if (task !== undefined) {
          if (m.error !== undefined) task.failed(rebuilt(m.error))
          else if (task.op === 'copy') task.done(m.done as CopyDone)
          else task.done(m.done as UnlinkDone)
        }
        schedulePump()
      })
      worker.on('error', (e) => leave(member, e))
      worker.on('exit', () => leave(member, new Error('a worker thread of the fs tree pool stopped')))
      crew.push(member)
    }
  } catch {
    crewSize = 0
  }
}

/** Stop the workers once they have had nothing to do for IDLE_MS. */
function armIdleStop(): void {
  if (idleTimer !== null) clearTimeout(idleTimer)
  idleTimer = setTimeout(() => {
    idleTimer = null
    if (queue.length === 0) dismissIdle()
  }, IDLE_MS)
  idleTimer.unref()
}

function schedulePump(): void {
  if (isPumpDue) return
  isPumpDue = true
  setImmediate(pump)
}

/** Hand queued chunks to online workers; with none online, run a slice of them here. */
function pump(): void {
  isPumpDue = false
  let isAnyOnline = false
  let isAnyBusy = false
  for (const m of crew) {
    if (!m.isOnline) continue
    isAnyOnline = true
    while (m.tasks.size < DEPTH && queue.length > 0) {
      const task = queue.shift() as Task
      const id = nextId++
      m.tasks.set(id, task)
      m.worker.ref()
      chunkCounts.workers++
      m.worker.postMessage({ id, op: task.op, chunk: task.chunk, abort: task.abort })
    }
    if (m.tasks.size > 0) isAnyBusy = true
  }
  if (queue.length > 0 && !isAnyOnline) {
    // A slice here while the workers start; with sliceMs 0 the workers do it all.
    if (sliceMs > 0 || crewSize === 0) {
      const until = performance.now() + sliceMs
      do runHere(queue.shift() as Task)
      while (queue.length > 0 && performance.now() < until)
    }
    if (queue.length > 0) {
      startCrew()
      // Until a worker is online (its 'online' pumps again), go on here.
      if (sliceMs > 0 || crew.length === 0) schedulePump()
    }
  }
  if (crew.length > 0 && queue.length === 0 && !isAnyBusy) armIdleStop()
}

function submit(task: Task): void {
  queue.push(task)
  schedulePump()
}

/**
 * True when enough chunks wait for a thread that a walk need not open more directories yet:
 * as many as the online workers take next, or two for the main thread. Fewer directories in
 * flight keep the kernel's caches on the ones being worked on.
 */
function isQueueFull(): boolean {
  let online = 0
  for (const m of crew) if (m.isOnline) online++
  return queue.length >= Math.max(2, online * DEPTH)
}

/**
 * One tree operation: main-thread steps (open, list, mkdir, rmdir), run depth first, and the
 * chunks they hand out. The first failure stops everything (chunks stop at their next entry,
 * no further step runs) and `run` rethrows it once nothing of the walk is in flight any more.
 */
export class Walk {
  readonly #abort = new SharedArrayBuffer(4)
  /** Stop where it is once it outlasts ENGAGE_MS, instead of asking for the workers. */
  readonly #isHandingOver: boolean
  #isHandedOver = false
  readonly #steps: Array<() => void> = []
  readonly #inflight = new Set<Promise<void>>()
  readonly #open = new Set<DirRef>()
  #failure: { error: unknown } | null = null

  /**
   * With `handOver`, a walk that outlasts HAND_OVER_MS (configurePool) stops there (no further step; chunks in
   * flight stop at their next entry) and `run` resolves true: the caller finishes the work
   * another way (remove.ts hands a large tree to the native helper).
   */
  constructor(options: { handOver?: boolean } = {}) {
    this.#isHandingOver = options.handOver === true
  }

  get isFailed(): boolean {
    return this.#failure !== null
  }

  fail(error: unknown): void {
    if (this.#failure !== null) return
    this.#failure = { error }
    Atomics.store(new Int32Array(this.#abort), 0, 1)
  }

  /** A main-thread step, run before the steps pushed earlier (depth first). */
  push(step: () => void): void {
    this.#steps.push(step)
  }

  /** Track a directory this walk opened; it is closed by `close`, or at the end. */
  opened(ref: DirRef): DirRef {
    if (ref.fd !== null) this.#open.add(ref)
    return ref
  }

  close(ref: DirRef): void {
    if (!this.#open.delete(ref)) return
    try {
      closeRef(ref)
    } catch {
      // Closing a descriptor cannot fail in a way worth reporting.
    }
  }

  /** Track async work of the walk (a large file's copy); a rejection fails the walk. */
  track(work: () => Promise<void>, then: () => void): void {
    if (this.isFailed) {
      then()
      return
    }
    const p: Promise<void> = work()
      .catch((e: unknown) => this.fail(e))
      .finally(() => {
        this.#inflight.delete(p)
        this.#step(then)
      })
    this.#inflight.add(p)
  }

  copy(chunk: CopyChunk, then: (done: CopyDone) => void): void {
    this.#chunk((done, failed) => submit({ op: 'copy', chunk, abort: this.#abort, done, failed }), then)
  }

  unlink(chunk: UnlinkChunk, then: (done: UnlinkDone) => void): void {
    this.#chunk((done, failed) => submit({ op: 'unlink', chunk, abort: this.#abort, done, failed }), then)
  }

  #chunk<R>(start: (done: (r: R) => void, failed: (e: unknown) => void) => void, then: (done: R) => void): void {
    const p = new Promise<R>((resolve, reject) => start(resolve, reject)).then(
      (r) => {
        this.#inflight.delete(p)
        this.#step(() => then(r))
      },
      (e: unknown) => {
        this.#inflight.delete(p)
        this.fail(e)
      },
    )
    this.#inflight.add(p)
  }

  /** Run a continuation now, failing the walk if it throws. */
  #step(step: () => void): void {
    try {
      step()
    } catch (e) {
      this.fail(e)
    }
  }

  /** Run the steps and wait for every chunk; rethrow the first failure. True when the walk was handed over. */
  async run(): Promise<boolean> {
    const engageAt = performance.now() + (this.#isHandingOver ? handOverMs : ENGAGE_MS)
    let isEngaged = false
    try {
      let sliceEnd = performance.now() + SLICE_MS
      for (;;) {
        if (!isEngaged && performance.now() > engageAt) {
          isEngaged = true
          if (this.#isHandingOver) {
            this.#isHandedOver = true
            Atomics.store(new Int32Array(this.#abort), 0, 1)
          } else startCrew()
        }
        // A failed or handed-over walk takes no further step; it only waits for what is in flight.
        if (this.isFailed || this.#isHandedOver) this.#steps.length = 0
        if (this.#steps.length === 0 && this.#inflight.size === 0) break
        // With nothing of its own in flight a walk goes on, whatever other walks have queued.
        if (this.#steps.length > 0 && (!isQueueFull() || this.#inflight.size === 0)) {
          this.#step(this.#steps.pop() as () => void)
          if (performance.now() > sliceEnd) {
            await new Promise<void>((resolve) => setImmediate(resolve))
            sliceEnd = performance.now() + SLICE_MS
          }
          continue
        }
        await Promise.race(this.#inflight)
        sliceEnd = performance.now() + SLICE_MS
      }
    } finally {
      for (const ref of [...this.#open]) this.close(ref)
    }
    if (this.#failure !== null) throw this.#failure.error
    return this.#isHandedOver
  }
}

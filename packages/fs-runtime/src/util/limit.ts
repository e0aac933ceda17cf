/**
 * A counting semaphore. `run` queues work until a slot is free; `tryAcquire` takes a slot only
 * when one is free now, so a caller that cannot get one does the work itself instead of
 * waiting (which is how recursive walks stay bounded without deadlock).
 */
export interface Limiter {
  run<T>(work: () => Promise<T>): Promise<T>
  tryAcquire(): boolean
  release(): void
}

export function createLimiter(size: number): Limiter {
  let active = 0
  const waiting: Array<() => void> = []
  const release = () => {
    const next = waiting.shift()
    if (next !== undefined) next()
    else active--
  }
  return {
    async run<T>(work: () => Promise<T>): Promise<T> {
      if (active < size) active++
      else await new Promise<void>((resolve) => waiting.push(resolve))
      try {
        return await work()
      } finally {
        release()
      }
    },
    tryAcquire() {
      if (active >= size) return false
      active++
      return true
    },
    release,
  }
}

/** Wait for every promise; rethrow the first failure only after all have settled. */
export async function settleAll(promises: readonly Promise<unknown>[]): Promise<void> {
  const results = await Promise.allSettled(promises)
  for (const r of results) if (r.status === 'rejected') throw r.reason
}

/**
 * Work started together and awaited together. `add` starts a task alongside when the shared
 * slots allow, else runs it in place (so a recursive walk never waits on a slot its own
 * ancestors hold); `push` adds work bounded elsewhere. `wait` settles everything and rethrows
 * the first failure.
 */
export class TaskGroup {
  readonly #slots: Limiter
  readonly #work: Promise<unknown>[] = []

  constructor(slots: Limiter) {
    this.#slots = slots
  }

  async add(task: () => Promise<void>): Promise<void> {
    if (this.#slots.tryAcquire()) {
      this.push(task().finally(() => this.#slots.release()))
      return
    }
    try {
      await task()
    } catch (e) {
      await Promise.allSettled(this.#work)
      throw e
    }
  }

  push(work: Promise<unknown>): void {
    work.catch(() => undefined)
    this.#work.push(work)
  }

  async wait(): Promise<void> {
    await settleAll(this.#work)
  }
}

/** Synchronous cleanups to run when the host process exits normally (`process.exit`, an empty event loop). */
const cleanups = new Set<() => void>()
let installed = false

function runAll(): void {
  for (const fn of cleanups) {
    try {
      fn()
    } catch {
      // a cleanup must never stop the others
    }
  }
}

/** Run `fn` synchronously when the host exits; returns the function that cancels it. */
export function onHostExit(fn: () => void): () => void {
  if (!installed) {
    installed = true
    process.on('exit', runAll)
  }
  cleanups.add(fn)
  return () => {
    cleanups.delete(fn)
  }
}

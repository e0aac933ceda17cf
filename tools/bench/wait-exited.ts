import type { ShellRuntime } from '@hands/shell-runtime'

/** Resolves once background shell `id` is no longer running (told by the runtime's resource events). */
export function waitExited(rt: ShellRuntime, id: string): Promise<void> {
  return new Promise((resolve) => {
    const done = () => rt.resources().find((r) => r.id === id)?.status !== 'running'
    if (done()) return resolve()
    const off = rt.onResourcesChanged(() => {
      if (done()) {
        off()
        resolve()
      }
    })
  })
}

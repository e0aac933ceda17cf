import { accessSync, constants } from 'node:fs'
import { fileURLToPath } from 'node:url'

/**
 * The native helper large trees are removed through: `hands-confine` of @hands/sandbox, built by
 * the workspace's postinstall (found by path).
 * null where it is not built (no C compiler); in CI it must be there.
 */
export const NATIVE_HELPER: string | null = (() => {
  const path = fileURLToPath(new URL(`../../../sandbox/native/bin/${process.platform}-${process.arch}/hands-confine`, import.meta.url))
  try {
    accessSync(path, constants.X_OK)
    return path
  } catch {
    if (process.env['CI']) throw new Error(`the native helper is not built at ${path} (node packages/sandbox/native/build.mjs)`)
    return null
  }
})()

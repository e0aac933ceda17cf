import { realpathSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Root } from '@modelcontextprotocol/sdk/types.js'
import { isWithin } from '@hands/fs-runtime'
import { isTooBroadForDefault } from '../session.ts'

/** What became of the roots a client offered. */
export interface ClientRoots {
  /** Real paths of the roots taken, in the client's order (the first is the workspace), without repeats. */
  accepted: string[]
  /** One line per root refused, saying why. */
  refused: string[]
  /** Accepted roots that are `/` or the home directory (taken, with a warning). */
  broad: string[]
}

/**
 * Check the roots a client offered (`roots/list`): each must be a `file://` URI of an existing
 * directory and, when the host gave roots, lie within one of them (by real path, whole segments).
 */
export function checkClientRoots(offered: readonly Root[], hostRoots: readonly string[] | null): ClientRoots {
  const out: ClientRoots = { accepted: [], refused: [], broad: [] }
  for (const root of offered) {
    let path: string
    try {
      path = fileURLToPath(root.uri)
    } catch {
      out.refused.push(`${root.uri}: not a file:// URI`)
      continue
    }
    let real: string
    try {
      real = realpathSync.native(path)
      if (!statSync(real).isDirectory()) throw new Error('not a directory')
    } catch {
      out.refused.push(`${path}: not an existing directory`)
      continue
    }
    if (hostRoots !== null && !hostRoots.some((h) => isWithin(h, real))) {
      out.refused.push(`${path}: outside the host's roots (${hostRoots.join(', ')})`)
      continue
    }
    if (out.accepted.includes(real)) continue
    out.accepted.push(real)
    if (isTooBroadForDefault(real)) out.broad.push(real)
  }
  return out
}

import type { PathGate } from '../confine/gate.ts'

/** One path at stake in a confirmation: what it is and how much it holds. */
export interface ConfirmTarget {
  /** The real absolute path. */
  path: string
  kind: 'file' | 'directory' | 'symlink' | 'other'
  /** Entries that are not directories, under a directory (counted, symlinks never followed); 1 for anything else. */
  files: number
  /** Bytes of the regular files among them (a symlink itself counts 0). */
  bytes: number
}

/** What the host's confirmation hook is asked. `paths` are the real absolute paths at stake; `targets` says what each is. */
export interface ConfirmRequest {
  tool: string
  action: 'delete' | 'overwrite'
  paths: string[]
  /** One per path, in the same order. */
  targets: ConfirmTarget[]
}

/**
 * A declined confirmation that says what happened, in words that finish the sentence
 * "not confirmed: …" (e.g. `the user declined`), for the not_confirmed message.
 */
export interface ConfirmDecline {
  declined: string
}

/**
 * The host's confirmation hook, consulted before a destructive act (delete, or a copy/move
 * that replaces an existing dest). Anything but `true` (or a throw) declines; a
 * `{ declined: why }` answer declines and says why.
 */
export type ConfirmHook = (request: ConfirmRequest) => boolean | ConfirmDecline | Promise<boolean | ConfirmDecline>

/** What every tool gets: the real roots, the gates and the confirmation hook. */
export interface Context {
  /** Real absolute roots; the first is the workspace root. */
  roots: readonly string[]
  gates: readonly PathGate[] | undefined
  confirm: ConfirmHook | undefined
  /** The native helper large trees are removed through (FsRuntimeOptions.helper), or null. */
  helper: string | null
}

import type { Effect, ToolName } from '@hands/contracts'
import type { CallOutcome } from './outcome.ts'

/** A call about to run: validated input, the tool's effect. */
export interface CallInfo {
  tool: ToolName
  input: Record<string, unknown>
  effect: Effect
}

/** Return `{ refuse: reason }` to stop a call before it runs; anything else lets it run. */
export type BeforeCallHook = (call: CallInfo) => void | { refuse: string } | Promise<void | { refuse: string }>

/** Observe a finished call (audit, snapshots, metrics). Errors thrown here are reported to stderr, never to the model. */
export type AfterCallHook = (call: CallInfo & { outcome: CallOutcome; duration_ms: number }) => void | Promise<void>

/** Asked before a destructive act (delete, or copy/move onto an existing path); false declines. */
export type { ConfirmDecline, ConfirmHook, ConfirmRequest, ConfirmTarget } from '@hands/fs-runtime'

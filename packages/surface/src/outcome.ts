import type { ErrorEnvelope, ToolName, ToolResult } from '@hands/contracts'

/**
 * What `call` resolves to. It never rejects for a tool failure: a success carries the contract
 * result, a failure carries the error envelope.
 */
export type CallOutcome<N extends ToolName = ToolName> = { ok: true; tool: N; result: ToolResult<N> } | { ok: false; tool: string; error: ErrorEnvelope }

/** Build a failure outcome. */
export function failure(tool: string, error: Omit<ErrorEnvelope, 'tool'>): { ok: false; tool: string; error: ErrorEnvelope } {
  return { ok: false, tool, error: { tool, ...error } }
}

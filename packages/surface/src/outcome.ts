import { explainIssues, type ErrorEnvelope, type InputIssue, type ToolName, type ToolResult } from '@hands/contracts'

/**
 * What `call` resolves to. It never rejects for a tool failure: a success carries the contract
 * result, a failure carries the error envelope.
 */
export type CallOutcome<N extends ToolName = ToolName> = { ok: true; tool: N; result: ToolResult<N> } | { ok: false; tool: string; error: ErrorEnvelope }

/** Build a failure outcome. */
export function failure(tool: string, error: Omit<ErrorEnvelope, 'tool'>): { ok: false; tool: string; error: ErrorEnvelope } {
  return { ok: false, tool, error: { tool, ...error } }
}

/** The invalid_input failure for input its tool's schema refuses: each issue named by property, and what is allowed. */
export function invalidInput(tool: string, issues: readonly InputIssue[]): { ok: false; tool: string; error: ErrorEnvelope } {
  const { message, hint } = explainIssues(issues)
  return failure(tool, { code: 'invalid_input', message: `${tool}: ${message}`, hint, is_preflight: true })
}

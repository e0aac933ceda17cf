import { ToolError, type ErrorCode } from '@hands/contracts'

/** A preflight ToolError: nothing ran, nothing changed. */
export function refuse(code: ErrorCode, message: string, hint: string): ToolError {
  return new ToolError({ code, message, hint, is_preflight: true })
}

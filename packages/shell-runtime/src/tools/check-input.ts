import { checkInput, explainIssues, ToolError, type ToolContract } from '@hands/contracts'

/**
 * Check an input against its contract. The surface validates before it calls a runtime, so this
 * is defence for direct library callers: a violation is `invalid_input`, before any effect.
 */
export function checkToolInput<T>(contract: Pick<ToolContract, 'input'>, value: T): T {
  const outcome = checkInput(contract, value)
  if (outcome.ok) return value
  const { message, hint } = explainIssues(outcome.issues)
  throw new ToolError({ code: 'invalid_input', message, hint, is_preflight: true })
}

import { checkInput, explainIssues, type ToolContract } from '@hands/contracts'
import { invalidInput } from '../errors/refuse.ts'

/**
 * Check a tool input against its contract. The surface validates first, so this is defence:
 * a direct library call with a bad input gets the same invalid_input the surface would give.
 */
export function checkToolInput<T>(contract: ToolContract, input: unknown): T {
  const outcome = checkInput(contract, input)
  if (outcome.ok) return outcome.value as T
  const { message, hint } = explainIssues(outcome.issues)
  throw invalidInput(message, hint)
}

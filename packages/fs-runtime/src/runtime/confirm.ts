import { notConfirmed } from '../errors/refuse.ts'
import type { ConfirmRequest, Context } from './context.ts'

/**
 * Ask the host's confirmation hook, when there is one, before a destructive act. Declining,
 * answering anything but `true`, or throwing refuses the call with not_confirmed, whose message
 * carries the hook's own account of the decline when it gave one.
 */
export async function confirmOrRefuse(ctx: Context, request: ConfirmRequest, given: readonly string[]): Promise<void> {
  if (ctx.confirm === undefined || request.paths.length === 0) return
  let answer: unknown
  try {
    answer = await ctx.confirm(request)
  } catch {
    answer = false
  }
  if (answer === true) return
  const why = typeof answer === 'object' && answer !== null && typeof (answer as { declined?: unknown }).declined === 'string' ? (answer as { declined: string }).declined : null
  throw notConfirmed(request.tool, request.action, given, why)
}

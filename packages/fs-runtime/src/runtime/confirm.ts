import type { Resolved } from '../confine/resolve.ts'
import { notConfirmed } from '../errors/refuse.ts'
import { measureTarget } from '../tree/measure.ts'
import type { ConfirmRequest, Context } from './context.ts'

/**
 * Ask the host's confirmation hook, when there is one, before a destructive act on `at` (each
 * measured, so the person asked sees what each path is and holds). Declining, answering
 * anything but `true`, or throwing refuses the call with not_confirmed, whose message carries
 * the hook's own account of the decline when it gave one.
 */
export async function confirmOrRefuse(
  ctx: Context,
  tool: string,
  action: ConfirmRequest['action'],
  at: readonly Resolved[],
  given: readonly string[],
): Promise<void> {
  if (ctx.confirm === undefined || at.length === 0) return
  const targets = await Promise.all(at.map((r) => measureTarget(r)))
  const request: ConfirmRequest = { tool, action, paths: at.map((r) => r.real), targets }
  let answer: unknown
  try {
    answer = await ctx.confirm(request)
  } catch {
    answer = false
  }
  if (answer === true) return
  const why =
    typeof answer === 'object' && answer !== null && typeof (answer as { declined?: unknown }).declined === 'string'
      ? (answer as { declined: string }).declined
      : null
  throw notConfirmed(tool, action, given, why)
}
